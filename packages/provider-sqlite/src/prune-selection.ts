import type { PruneOptions, StoredCheckpoint } from '@crewline/runtime-state';
import type { Connection } from './connection.js';
import { type MetadataRow, metadataColumns, storedFromRow } from './metadata-row.js';

/**
 * The checkpoints a prune removes, oldest first (inside the caller's transaction). Per branch, a
 * checkpoint goes when it is beyond the newest `keep` AND older than `olderThan`; with one option,
 * that option alone decides, and `olderThan` alone still leaves each branch its newest checkpoint.
 */
export function selectPruned(connection: Connection, options: PruneOptions): StoredCheckpoint[] {
  const { db, location } = connection;
  const rows = (
    options.branch === undefined
      ? db.prepare(`SELECT ${metadataColumns} FROM checkpoints ORDER BY branch, id`).all()
      : db
          .prepare(`SELECT ${metadataColumns} FROM checkpoints WHERE branch = ? ORDER BY id`)
          .all(options.branch)
  ) as MetadataRow[];
  const keep = options.keep ?? 1;
  const cutoff = options.olderThan?.getTime();
  const chosen: MetadataRow[] = [];
  let start = 0;
  while (start < rows.length) {
    let end = start;
    while (end < rows.length && rows[end]!.branch === rows[start]!.branch) end += 1;
    const excess = Math.max(0, end - start - keep);
    for (let index = start; index < start + excess; index += 1) {
      const row = rows[index]!;
      if (cutoff === undefined || Date.parse(row.created_at) < cutoff) chosen.push(row);
    }
    start = end;
  }
  chosen.sort((left, right) => (left.id < right.id ? -1 : left.id > right.id ? 1 : 0));
  return chosen.map((row) => storedFromRow(row, location));
}
