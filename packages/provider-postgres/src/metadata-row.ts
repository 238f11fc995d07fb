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

/** A row whose entity summaries are not JSON: the checkpoint cannot be listed. */
export function damagedSummaries(id: string, location: string, cause: unknown) {
  return postgresError(
    'corrupt_checkpoint',
    `checkpoint "${id}" in ${location} has damaged entity summaries; delete it with \`crewline checkpoint prune\` or restore the schema from a backup`,
    { cause },
  );
}
