import type Database from 'better-sqlite3';
import { metadataColumns } from '../read/metadata-row.js';

export type Statement = Database.Statement<unknown[], unknown>;
/** One query prepared for each combination of the listing filters (branch, lineage, both, none). */
export type FilteredStatements = Record<'all' | 'branch' | 'lineage' | 'both', Statement>;

/** The prepared statements of one connection (prepared once, reused by every call). */
export interface Statements {
  checkpointById: Statement;
  metadataById: Statement;
  parentOf: Statement;
  insertCheckpoint: Statement;
  deleteCheckpoint: Statement;
  countCheckpoints: Statement;
  lastEventOf: Statement;
  eventEndBytes: Statement;
  eventsBetween: Statement;
  insertEvent: Statement;
  streamById: Statement;
  insertStream: Statement;
  insertChunk: Statement;
  chunkBody: Statement;
  readMeta: Statement;
  writeMeta: Statement;
  dataVersion: Statement;
  list: FilteredStatements;
  latest: FilteredStatements;
}

export function prepareStatements(db: Database.Database): Statements {
  // Raw mode (rows as arrays): listings can be long, and rows are turned into listed objects anyway.
  const list = (where: string) =>
    db.prepare(`SELECT ${metadataColumns} FROM checkpoints ${where} ORDER BY id`).raw(true);
  const latest = (where: string) =>
    db.prepare(`SELECT ${metadataColumns} FROM checkpoints ${where} ORDER BY id DESC LIMIT 1`);
  return {
    checkpointById: db.prepare(
      `SELECT ${metadataColumns}, stream_id, format_version, library_version, head, metadata_text FROM checkpoints WHERE id = ?`,
    ),
    metadataById: db.prepare(`SELECT ${metadataColumns} FROM checkpoints WHERE id = ?`),
    parentOf: db.prepare('SELECT stream_id, event_count, head FROM checkpoints WHERE id = ?'),
    insertCheckpoint: db.prepare(
      `INSERT INTO checkpoints (id, created_at, lineage_id, parent_id, branch, trigger, entities, event_count,
        size_bytes, stream_id, format_version, library_version, head, metadata_text)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    deleteCheckpoint: db.prepare('DELETE FROM checkpoints WHERE id = ?'),
    countCheckpoints: db.prepare('SELECT count(*) FROM checkpoints').pluck(),
    lastEventOf: db
      .prepare('SELECT key, end_bytes FROM events WHERE key >= ? AND key < ? ORDER BY key DESC LIMIT 1')
      .safeIntegers(true),
    eventEndBytes: db.prepare('SELECT end_bytes FROM events WHERE key = ?').pluck(),
    eventsBetween: db.prepare('SELECT body FROM events WHERE key >= ? AND key < ? ORDER BY key').pluck(),
    insertEvent: db.prepare('INSERT INTO events (key, body, end_bytes) VALUES (?, ?, ?)'),
    streamById: db.prepare('SELECT id, parent_id, base, base_bytes FROM streams WHERE id = ?'),
    insertStream: db.prepare('INSERT INTO streams (parent_id, base, base_bytes) VALUES (?, ?, ?)'),
    insertChunk: db.prepare('INSERT INTO chunks (body) VALUES (?)'),
    chunkBody: db.prepare('SELECT body FROM chunks WHERE id = ?').pluck(),
    readMeta: db.prepare('SELECT value FROM crewline_meta WHERE key = ?').pluck(),
    writeMeta: db.prepare('INSERT OR REPLACE INTO crewline_meta (key, value) VALUES (?, ?)'),
    dataVersion: db.prepare('PRAGMA data_version').pluck(),
    list: {
      all: list(''),
      branch: list('WHERE branch = ?'),
      lineage: list('WHERE lineage_id = ?'),
      both: list('WHERE branch = ? AND lineage_id = ?'),
    },
    latest: {
      all: latest(''),
      branch: latest('WHERE branch = ?'),
      lineage: latest('WHERE lineage_id = ?'),
      both: latest('WHERE branch = ? AND lineage_id = ?'),
    },
  };
}

/** The prepared statements of the `leases` table (see schema.ts), on writable connections only. */
export interface LeaseStatements {
  /** `[owner, holder, expires_at]` of a lineage's lease (raw: the write path reads it). */
  get: Statement;
  /** `[owner, holder, expires_at, holder_process]` of a lineage's lease: what a claim reads. */
  getForClaim: Statement;
  put: Statement;
  extend: Statement;
  release: Statement;
}

/**
 * Prepared on writable connections only: those always have the current layout, while a read-only
 * connection may be open on an older one without the table (reads never need it).
 */
export function prepareLeaseStatements(db: Database.Database): LeaseStatements {
  return {
    get: db.prepare('SELECT owner, holder, expires_at FROM leases WHERE lineage_id = ?').raw(true),
    getForClaim: db
      .prepare('SELECT owner, holder, expires_at, holder_process FROM leases WHERE lineage_id = ?')
      .raw(true),
    put: db.prepare(
      `INSERT INTO leases (lineage_id, owner, holder, expires_at, holder_process) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (lineage_id) DO UPDATE SET owner = excluded.owner, holder = excluded.holder,
         expires_at = excluded.expires_at, holder_process = excluded.holder_process`,
    ),
    extend: db.prepare('UPDATE leases SET expires_at = ? WHERE lineage_id = ? AND owner = ?'),
    release: db.prepare('DELETE FROM leases WHERE lineage_id = ? AND owner = ?'),
  };
}

export type LeaseRow = [owner: string, holder: string, expiresAt: number];

/** A lease row as a claim reads it: {@link LeaseRow} and the `holder_process` text (null before version 7). */
export type ClaimedLeaseRow = [
  owner: string,
  holder: string,
  expiresAt: number,
  holderProcess: string | null,
];

/** A lease row as a connection read it, and `PRAGMA data_version` then (see `Connection.knownLease`). */
export interface KnownLease {
  lineageId: string;
  row: LeaseRow | undefined;
  dataVersion: number;
}
