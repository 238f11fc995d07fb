import type { CorruptionMode } from '@crewline/provider-testkit';
import Database from 'better-sqlite3';

/**
 * Damages one stored checkpoint the way the testkit asks, through a separate connection (as
 * another process, or a disk error, would):
 * - `truncate`: the head's root body (a chunk, or the row's head in old rows) cut in half;
 * - `garbage`: that body replaced by bytes that are not JSON;
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
    // The head is the id of the chunk holding its root body (or, in old rows, that body itself).
    const inline = String(row.head).startsWith('{');
    const body = inline
      ? String(row.head)
      : (db.prepare('SELECT body FROM chunks WHERE id = ?').pluck().get(Number(row.head)) as string);
    const replaceHead = (value: string) => {
      if (inline) update('head', value);
      else db.prepare('UPDATE chunks SET body = ? WHERE id = ?').run(value, Number(row.head));
    };
    if (mode === 'truncate') replaceHead(body.slice(0, Math.floor(body.length / 2)));
    else if (mode === 'garbage') replaceHead('\u0000\u00ff not json at all \u0001');
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
