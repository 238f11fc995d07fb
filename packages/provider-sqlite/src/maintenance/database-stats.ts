import { statSync } from 'node:fs';
import type { Connection } from '../database/connection.js';
import { isMemoryLocation } from '../database/open-connection.js';
import { schemaVersionOf } from '../database/schema-version.js';

/** What `SqliteProvider.stats` reports about one database. */
export interface DatabaseStats {
  /** `PRAGMA user_version`, or the version the tables show when that was lost (see schema-version.ts). */
  schemaVersion: number;
  journalMode: string;
  /** The `synchronous` setting of the provider's connection: `'normal'` or `'full'`. */
  synchronous: string;
  pageSize: number;
  pageCount: number;
  freePages: number;
  /** `pageCount * pageSize`: the size of the main database file once the WAL is checkpointed. */
  databaseBytes: number;
  /** Current size of the `-wal` file. */
  walBytes: number;
  checkpoints: number;
  streams: number;
  events: number;
  chunks: number;
}

const synchronousNames = ['off', 'normal', 'full', 'extra'];

/** Sizes and counts of the database behind `connection` (inside the caller's read transaction). */
export function readDatabaseStats(connection: Connection): DatabaseStats {
  const { db, location } = connection;
  const pragma = (name: string) => db.pragma(name, { simple: true });
  const count = (table: string) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
  const pageSize = pragma('page_size') as number;
  const pageCount = pragma('page_count') as number;
  let walBytes = 0;
  if (!isMemoryLocation(location)) {
    try {
      walBytes = statSync(`${location}-wal`).size;
    } catch {
      walBytes = 0;
    }
  }
  return {
    schemaVersion: schemaVersionOf(db, location),
    journalMode: String(pragma('journal_mode')),
    synchronous: synchronousNames[pragma('synchronous') as number] ?? 'unknown',
    pageSize,
    pageCount,
    freePages: pragma('freelist_count') as number,
    databaseBytes: pageSize * pageCount,
    walBytes,
    checkpoints: count('checkpoints'),
    streams: count('streams'),
    events: count('events'),
    chunks: count('chunks'),
  };
}
