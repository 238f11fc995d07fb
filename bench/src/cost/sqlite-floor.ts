// The floor under SqliteProvider's write: what SQLite itself costs for the rows a run's checkpoints
// stored, with none of crewline's work around it (no snapshot, no redaction, no encoding, no lookups).
// The database a run left is replayed into a fresh one of the same layout, one `BEGIN IMMEDIATE`
// transaction per checkpoint, in the order they were written, inserting exactly the rows that
// checkpoint added: its new chunks, its new event lines, its stream when it started one, its
// metadata row. What a write costs beyond this is crewline's own code.
import Database from 'better-sqlite3';

interface CheckpointRow {
  id: string;
  stream_id: number;
  event_count: number;
  head: string;
}

/** Rows one checkpoint added, read back from the run's database. */
interface AddedRows {
  checkpoint: Record<string, unknown>;
  stream: Record<string, unknown> | undefined;
  events: Record<string, unknown>[];
  chunks: Record<string, unknown>[];
}

const streamSpan = 4_294_967_296n;

/** Reads, per checkpoint in id (creation) order, the rows it added to the database at `location`. */
function addedRows(db: Database.Database): AddedRows[] {
  const checkpoints = db.prepare('SELECT * FROM checkpoints ORDER BY id').all() as (CheckpointRow &
    Record<string, unknown>)[];
  const chunksBetween = db.prepare('SELECT id, body FROM chunks WHERE id > ? AND id <= ? ORDER BY id');
  const eventsBetween = db.prepare(
    'SELECT key, body, end_bytes FROM events WHERE key >= ? AND key < ? ORDER BY key',
  );
  const streamById = db.prepare('SELECT * FROM streams WHERE id = ?');
  db.defaultSafeIntegers(true);
  const seenStreams = new Map<number, number>();
  let lastChunk = 0n;
  const added: AddedRows[] = [];
  for (const checkpoint of checkpoints) {
    const streamId = Number(checkpoint.stream_id);
    let stream: Record<string, unknown> | undefined;
    let from = seenStreams.get(streamId);
    if (from === undefined) {
      stream = streamById.get(streamId) as Record<string, unknown>;
      from = Number(stream.base);
    }
    const to = Number(checkpoint.event_count);
    const base = BigInt(streamId) * streamSpan;
    const events = eventsBetween.all(base + BigInt(from), base + BigInt(to)) as Record<string, unknown>[];
    seenStreams.set(streamId, Math.max(from, to));
    // A head is the id of the chunk holding the tree's root, stored after its children.
    const head = BigInt(checkpoint.head);
    const chunks = head > lastChunk ? (chunksBetween.all(lastChunk, head) as Record<string, unknown>[]) : [];
    if (head > lastChunk) lastChunk = head;
    added.push({ checkpoint, stream, events, chunks });
  }
  db.defaultSafeIntegers(false);
  return added;
}

/**
 * Replays the rows of every checkpoint in the run's database at `location` into a new database at
 * `into` (same tables, same pragmas as SqliteProvider's defaults: WAL, `synchronous = NORMAL`) and
 * returns each checkpoint's transaction time in ms, in the order they were written. As the provider
 * does, the WAL is checkpointed every few writes outside the timed work.
 */
export function replayStoredRows(location: string, into: string): number[] {
  const source = new Database(location, { readonly: true });
  let rows: AddedRows[];
  let tables: string[];
  try {
    rows = addedRows(source);
    tables = (
      source
        .prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL")
        .pluck()
        .all() as string[]
    ).filter((sql) => !sql.includes('sqlite_sequence'));
  } finally {
    source.close();
  }
  const target = new Database(into);
  try {
    target.pragma('journal_mode = WAL');
    target.pragma('synchronous = NORMAL');
    for (const sql of tables) target.exec(sql);
    target.defaultSafeIntegers(true);
    const insertInto = (table: string, row: Record<string, unknown>) =>
      target.prepare(
        `INSERT INTO ${table} (${Object.keys(row).join(', ')}) VALUES (${Object.keys(row)
          .map(() => '?')
          .join(', ')})`,
      );
    const first = rows[0];
    if (first === undefined) return [];
    const statements = {
      checkpoint: insertInto('checkpoints', first.checkpoint),
      stream: insertInto('streams', { id: 0, parent_id: 0, base: 0, base_bytes: 0 }),
      event: insertInto('events', { key: 0, body: '', end_bytes: 0 }),
      chunk: insertInto('chunks', { id: 0, body: '' }),
    };
    const write = target.transaction((added: AddedRows) => {
      for (const chunk of added.chunks) statements.chunk.run(chunk.id, chunk.body);
      if (added.stream !== undefined)
        statements.stream.run(
          added.stream.id,
          added.stream.parent_id,
          added.stream.base,
          added.stream.base_bytes,
        );
      for (const event of added.events) statements.event.run(event.key, event.body, event.end_bytes);
      statements.checkpoint.run(...Object.values(added.checkpoint));
    });
    const times: number[] = [];
    for (const [index, added] of rows.entries()) {
      const started = performance.now();
      write.immediate(added);
      times.push(performance.now() - started);
      if (index % 8 === 7) target.pragma('wal_checkpoint(PASSIVE)');
    }
    return times;
  } finally {
    target.close();
  }
}
