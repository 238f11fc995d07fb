import type { MetadataColumns } from '@crewline/runtime-state/internal';
import { postgresError } from './errors.js';

/** The metadata columns of the `checkpoints` table, as a list query returns them. */
export interface MetadataRow extends MetadataColumns {
  /** A bigint column: a string as pg returns it, a number once computed here. */
  size_bytes: number | string;
}

/** The columns of {@link MetadataRow}, in the order `storedFromRawRow` reads them. */
export const metadataColumns =
  'id, created_at, lineage_id, parent_id, branch, "trigger", entities, event_count, size_bytes';

/**
 * A row that is not what a write stores (a damaged or tampered schema): names the schema, the
 * checkpoint when its id is still readable, the column at fault, and how to recover. Listing,
 * `latest` and prune refuse with it rather than hand their callers a row that breaks them.
 */
export function damagedRow(id: string | undefined, location: string, problem: string, cause?: unknown) {
  const which = id === undefined ? 'a checkpoint row' : `the row of checkpoint "${id}"`;
  const deleteHint = id === undefined ? '' : `, or delete that checkpoint (PostgresProvider.delete)`;
  return postgresError(
    'corrupt_checkpoint',
    `schema ${location} is damaged: ${which} is not what crewline writes (${problem}); restore the schema from a backup${deleteHint}`,
    { cause },
  );
}
