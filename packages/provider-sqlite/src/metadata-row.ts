import type { MetadataColumns } from '@crewline/runtime-state/internal';
import { sqliteError } from './errors.js';

/** The metadata columns of the `checkpoints` table, as a list query returns them. */
export interface MetadataRow extends MetadataColumns {
  size_bytes: number;
}

/** The columns of {@link MetadataRow}, in the order `storedFromRawRow` reads them. */
export const metadataColumns =
  'id, created_at, lineage_id, parent_id, branch, trigger, entities, event_count, size_bytes';

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
