import { resolve } from 'node:path';
import { logger } from '@crewline/events';
import { component } from '../errors.js';
import type { ResolvedSqliteProviderOptions } from '../options.js';
import type { Connection } from './connection.js';
import { databaseExists, isMemoryLocation, openConnection, openReadConnection } from './open-connection.js';

/** Connections are shared by every spelling of one database path. */
function connectionKey(location: string): string {
  return isMemoryLocation(location) ? location : resolve(location);
}

/**
 * The open databases of one provider: at most one connection per database, read-only until the
 * first write needs a writable one.
 */
export class ConnectionPool {
  readonly #options: ResolvedSqliteProviderOptions;
  readonly #connections = new Map<string, Connection>();
  /** The same connections by the location string callers pass (skips path resolution per write). */
  readonly #byLocation = new Map<string, Connection>();
  /** Read-only connections replaced by writable ones, closed by {@link close}. */
  #retired: Connection[] = [];

  constructor(options: ResolvedSqliteProviderOptions) {
    this.#options = options;
  }

  /**
   * The connection to write with: the cached one when it is writable, else a new writable one (the
   * file and schema created as needed), which replaces a read-only connection of the same database.
   * Throws for a database that fails SQLite's quick_check (see integrity-check.ts); the read-only
   * connection opened instead is kept for reads.
   */
  writable(location: string): Connection {
    const known = this.#byLocation.get(location);
    if (known?.writable) return known;
    const key = connectionKey(location);
    const cached = this.#connections.get(key);
    if (cached?.writable) {
      this.#byLocation.set(location, cached);
      return cached;
    }
    // A database found damaged when it was opened for writing stays refused: checking it again on
    // every write would read the whole file each time.
    if (cached?.damage !== undefined) throw cached.damage;
    const connection = openConnection(location, this.#options);
    if (cached) this.#forget(cached);
    this.#connections.set(key, connection);
    this.#byLocation.set(location, connection);
    if (connection.damage !== undefined) throw connection.damage;
    return connection;
  }

  /**
   * A connection to read with: the cached one (writable or not), else the database opened
   * read-only. Undefined when there is no database, or it holds no crewline schema yet: reads never
   * create a file or a schema.
   */
  readable(location: string): Connection | undefined {
    const known = this.#byLocation.get(location);
    if (known !== undefined) return known;
    const key = connectionKey(location);
    let connection = this.#connections.get(key);
    if (connection === undefined) {
      if (!databaseExists(location)) return undefined;
      connection = isMemoryLocation(location)
        ? openConnection(location, this.#options)
        : openReadConnection(location, this.#options);
      if (connection === undefined) return undefined;
      this.#connections.set(key, connection);
    }
    this.#byLocation.set(location, connection);
    return connection;
  }

  /** A writable connection for removals, only when the database already holds checkpoints to remove. */
  existingWritable(location: string): Connection | undefined {
    return this.readable(location) === undefined ? undefined : this.writable(location);
  }

  /**
   * Drops every cache entry of a read-only connection that a writable one replaces. It is closed
   * with the provider, not now: a read waiting out a busy lock may still hold it.
   */
  #forget(connection: Connection): void {
    for (const [location, cached] of this.#byLocation) {
      if (cached === connection) this.#byLocation.delete(location);
    }
    this.#retired.push(connection);
  }

  /**
   * Closes every connection, read-only ones first; the pool can be used again afterwards.
   *
   * Why that order: SQLite copies the WAL back into the database and removes it only when the last
   * connection to the database closes, and only a read-write one can. A read-only connection closed
   * after the writable one (a resume reads its checkpoint before it writes) left the WAL behind, and
   * with it every checkpoint of a killed writer's leftover `-wal`: a copy of the `.db` alone listed
   * none of them.
   */
  close(): void {
    const connections = [...this.#retired.splice(0), ...this.#connections.values()];
    const readOnlyFirst = [
      ...connections.filter((connection) => !connection.writable),
      ...connections.filter((connection) => connection.writable),
    ];
    for (const connection of readOnlyFirst) {
      try {
        connection.close();
      } catch (error) {
        logger.warn(component, `closing ${connection.location} failed`, error);
      }
    }
    this.#connections.clear();
    this.#byLocation.clear();
  }
}
