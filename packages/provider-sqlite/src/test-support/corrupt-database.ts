import type { CorruptionMode } from '@crewline/provider-testkit';
import Database from 'better-sqlite3';

/**
 * Damages one stored checkpoint the way the testkit asks, through a separate connection (as
 * another process, or a disk error, would):
 * - `truncate`: the row's head cut in half;
 * - `garbage`: the head replaced by bytes that are not JSON;
 * - `newer-version`: the stored format version set to 999;
 * - `proto`: a raw `"__proto__"` member added to the stored metadata text.
 */
export function corruptCheckpoint(location: string, id: string, mode: CorruptionMode): void {
  const db = new Database(location);
  try {
    const row = db.prepare('SELECT * FROM checkpoints WHERE id = ?').get(id) as
      | { head: string; metadata_text: string | null }
      | undefined;
    if (row === undefined) throw new Error(`no checkpoint ${id} to corrupt`);
    const update = (column: string, value: unknown) =>
      db.prepare(`UPDATE checkpoints SET ${column} = ? WHERE id = ?`).run(value, id);
    if (mode === 'truncate') update('head', row.head.slice(0, Math.floor(row.head.length / 2)));
    else if (mode === 'garbage') update('head', '\u0000\u00ff not json at all \u0001');
    else if (mode === 'newer-version') update('format_version', 999);
    else {
      const metadata = db
        .prepare(
          `SELECT json_object('id', id, 'createdAt', created_at, 'lineageId', lineage_id, 'parentId', parent_id,
             'branch', branch, 'trigger', trigger, 'entities', json(entities), 'eventCount', event_count)
           FROM checkpoints WHERE id = ?`,
        )
        .pluck()
        .get(id) as string;
      update('metadata_text', `{"__proto__":{"polluted":"yes"},${metadata.slice(1)}`);
    }
  } finally {
    db.close();
  }
}
