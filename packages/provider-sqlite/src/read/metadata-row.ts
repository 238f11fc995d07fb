import type { MetadataColumns } from '@crewline/runtime-state/internal';
import { sqliteError } from '../errors.js';

/** The metadata columns of the `checkpoints` table, as a list query returns them. */
export interface MetadataRow extends MetadataColumns {
  size_bytes: number;
}

/**
 * Entity summaries at least this long (a flow and the crews it ran) are kept in a chunk `e…` that
 * the `entities` column names by id (schema version 5), and that consecutive checkpoints with the
 * same summaries share: a `checkpoints` row is a key of a WITHOUT ROWID table, stored whole in its
 * interior pages too, so a 1 KB column made a 5,000-checkpoint flow's table 13 MB, mostly empty.
 */
export const ENTITIES_CHUNK_BYTES = 256;

/** The stored `entities` column as the summaries' JSON text: in place, or from the chunk it names. */
const entitiesColumn = `CASE WHEN substr(entities, 1, 1) = '[' THEN entities ELSE (SELECT substr(body, 2) FROM chunks WHERE id = CAST(entities AS INTEGER) AND substr(body, 1, 1) = 'e') END AS entities`;

/** The columns of {@link MetadataRow}, in the order `storedFromRawRow` reads them. */
export const metadataColumns = `id, created_at, lineage_id, parent_id, branch, trigger, ${entitiesColumn}, event_count, size_bytes`;

/**
 * A row that is not what a write stores (a damaged or tampered database): names the database, the
 * checkpoint when its id is still readable, the column at fault, and how to recover. Listing,
 * `latest` and prune refuse with it rather than hand their callers a row that breaks them.
 */
export function damagedRow(id: string | undefined, location: string, problem: string, cause?: unknown) {
  const which = id === undefined ? 'a checkpoint row' : `the row of checkpoint "${id}"`;
  const deleteHint = id === undefined ? '' : `, or delete that checkpoint (SqliteProvider.delete)`;
  return sqliteError(
    'corrupt_checkpoint',
    `database "${location}" is damaged: ${which} is not what crewline writes (${problem}); restore the database from a backup${deleteHint}`,
    { cause },
  );
}
