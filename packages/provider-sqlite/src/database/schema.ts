import type Database from 'better-sqlite3';

/** Version of the database layout below, kept in `PRAGMA user_version`. */
export const SCHEMA_VERSION = 7;

/**
 * Oldest layout this package still reads, and upgrades to {@link SCHEMA_VERSION} when it first
 * writes. Older layouts only differ from the current one by what {@link schemaUpgrades} removes, and
 * by the `leases` table that only writes and claims use, so reads (read-only, no upgrade) work on
 * them as they are.
 */
export const OLDEST_SCHEMA_VERSION = 1;

/**
 * One row per fenced lineage head: who continues the run (`owner`, a random token per continuation),
 * how to name them to whoever is refused (`holder`), until when (`expires_at`, milliseconds since
 * the epoch by this machine's clock; every process sharing the file shares that clock) and, from
 * version 7 on, the process that claimed it (`holder_process`, see leases/holder-process.ts): a claim
 * takes over at once from a holder whose process is provably gone. Keyed by the lineage (WITHOUT
 * ROWID: the key is the only index), so the check a leased write makes is one primary-key lookup.
 * Rows outlive their checkpoints: deleting or pruning never touches a lease.
 */
const leasesTable = `
CREATE TABLE IF NOT EXISTS leases (
  lineage_id TEXT NOT NULL PRIMARY KEY,
  owner TEXT NOT NULL,
  holder TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  holder_process TEXT
) WITHOUT ROWID;
`;

/** The `leases` table as version 4 created it: the upgrade from version 3 creates this one. */
const versionFourLeasesTable = `
CREATE TABLE IF NOT EXISTS leases (
  lineage_id TEXT NOT NULL PRIMARY KEY,
  owner TEXT NOT NULL,
  holder TEXT NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
`;

/** The column version 7 adds to `leases` (see {@link schemaUpgrades}); it tells a version 7 database. */
export const HOLDER_PROCESS_COLUMN = 'holder_process';

/** Present from schema version 5 on (see {@link schemaUpgrades}). */
export const SEGMENTS_MARKER_KEY = 'segmented_arrays';
const segmentsMarker = `INSERT OR IGNORE INTO crewline_meta (key, value) VALUES ('${SEGMENTS_MARKER_KEY}', '1');`;

/** Present from schema version 6 on (see {@link schemaUpgrades}). */
export const EVENT_REFERENCES_MARKER_KEY = 'event_references';
const eventReferencesMarker = `INSERT OR IGNORE INTO crewline_meta (key, value) VALUES ('${EVENT_REFERENCES_MARKER_KEY}', '1');`;

/**
 * Statements (or, where SQLite has no idempotent statement, a function) that bring a database from a
 * version to the next, run inside the write lock.
 * Version 1 → 2 drops the branch and lineage indexes of `checkpoints`: each cost every write a WAL
 * frame (about 6 µs of a 0.14 ms write), for listings filtered by branch or lineage that are rare
 * and cheap without them (see the layout below). Version 2 → 3 changes nothing stored: new rows keep
 * their head in a chunk (below), which older versions of this package cannot read. Version 3 → 4 adds
 * the `leases` table (fenced lineage heads); older versions of this package would write without
 * checking it, so they refuse a version 4 database.
 */
export const schemaUpgrades: Readonly<Record<number, string | ((db: Database.Database) => void)>> = {
  1: 'DROP INDEX IF EXISTS checkpoints_by_branch; DROP INDEX IF EXISTS checkpoints_by_lineage;',
  // Version 3 writes each head's root body as a chunk; the inline heads of older rows stay readable.
  2: '',
  3: versionFourLeasesTable,
  // Version 5 stores long arrays in segments (`s` chunks), which older packages cannot read: the
  // marker row tells a database whose user_version was lost from a version 4 one.
  4: segmentsMarker,
  // Version 6 stores an event's long strings that an earlier event of its stream holds as references
  // to it (layout/event-references.ts), which older packages cannot read; rows written before stay
  // as they are, and this package reads both.
  5: eventReferencesMarker,
  // Version 7 records the process holding each lease. Older packages would claim without it and
  // leave the previous holder's there (the row records its owner too, so a stale one is never
  // believed, see leases/holder-process.ts), and would take no dead holder over at once.
  // Checked first, as every other upgrade is idempotent: SQLite has no ADD COLUMN IF NOT EXISTS.
  6: (db) => {
    if (!hasColumn(db, 'leases', HOLDER_PROCESS_COLUMN))
      db.exec(`ALTER TABLE leases ADD COLUMN ${HOLDER_PROCESS_COLUMN} TEXT;`);
  },
};

/** True when `table` has a column `column`. */
export function hasColumn(db: Database.Database, table: string, column: string): boolean {
  return (
    db.prepare('SELECT 1 FROM pragma_table_info(?) WHERE name = ?').pluck().get(table, column) !== undefined
  );
}

/** Marks a database as crewline's, so the provider never writes into another application's file. */
export const APPLICATION_MARKER = 'crewline-checkpoints';

/**
 * The layout (version 7). Idempotent: every statement can run again on an existing database.
 *
 * - `checkpoints`: one row per checkpoint — the metadata a listing needs, where its events are
 *   (`stream_id`, `event_count`) and its head (`head`: the id of the chunk holding the root body of
 *   its chunk tree; rows of versions 1 and 2 hold the root body itself, which starts with `{`). The
 *   root body goes to `chunks` because a write adds chunks anyway: in this table it made every row
 *   about 230 bytes longer, and this table's B-tree (WITHOUT ROWID keeps whole rows in its interior
 *   pages too) then touched more pages per write. Keyed by id
 *   (WITHOUT ROWID: no second index for the id). Ids sort by creation time, so the table itself is
 *   the time index. It has no other index: every index is one more B-tree page (WAL frame) per
 *   write, and a write happens on every event. A listing filtered by branch or lineage reads the
 *   table in id order and skips the other rows (it builds objects only for the rows it returns),
 *   and the latest of a branch or lineage reads backwards from the newest row until one matches.
 * - `streams`: a lineage segment of events. A stream continues its parent stream after its first
 *   `base` events (a fork, or a resume from a checkpoint that was no longer the newest).
 * - `events`: append-only event lines keyed by `stream * 2^32 + seq`, with the running byte total
 *   (of the lines as written). From version 6 on, a line may keep its long strings as references to
 *   earlier lines of its lineage (layout/event-references.ts).
 * - `chunks`: the chunk tree of heads (chunk-tree/tree-node.ts in @crewline/runtime-state), written
 *   once and shared by every later checkpoint whose value did not change.
 * - `leases`: see {@link leasesTable}.
 */
export const schemaStatements = `
CREATE TABLE IF NOT EXISTS crewline_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO crewline_meta (key, value) VALUES ('application', '${APPLICATION_MARKER}');
INSERT OR IGNORE INTO crewline_meta (key, value) VALUES ('pending_garbage', '0');
CREATE TABLE IF NOT EXISTS checkpoints (
  id TEXT NOT NULL PRIMARY KEY,
  created_at TEXT NOT NULL,
  lineage_id TEXT NOT NULL,
  parent_id TEXT,
  branch TEXT NOT NULL,
  trigger TEXT NOT NULL,
  entities TEXT NOT NULL,
  event_count INTEGER NOT NULL,
  size_bytes INTEGER NOT NULL,
  stream_id INTEGER NOT NULL,
  format_version INTEGER NOT NULL,
  library_version TEXT NOT NULL,
  head TEXT NOT NULL,
  metadata_text TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS streams (
  id INTEGER PRIMARY KEY,
  parent_id INTEGER,
  base INTEGER NOT NULL,
  base_bytes INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
  key INTEGER PRIMARY KEY,
  body TEXT NOT NULL,
  end_bytes INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
  id INTEGER PRIMARY KEY,
  body TEXT NOT NULL
);
${leasesTable}
${segmentsMarker}
${eventReferencesMarker}`;

const streamSpan = 4_294_967_296n;

/** Row key of event `seq` of stream `stream`. */
export function eventKey(stream: number, seq: number): bigint {
  return BigInt(stream) * streamSpan + BigInt(seq);
}

/** Splits an event row key into stream and sequence. */
export function splitEventKey(key: bigint): { stream: number; seq: number } {
  return { stream: Number(key / streamSpan), seq: Number(key % streamSpan) };
}
