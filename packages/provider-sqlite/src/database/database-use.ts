import { closeSync, openSync, statSync } from 'node:fs';

/** This process's open connections to one database file, and the -shm descriptors kept for them. */
interface OpenDatabase {
  connections: number;
  /** Descriptors of -shm files this process reads the wal-index header from, by path. */
  shm: Map<string, number>;
}

/**
 * Every database file this process has connections to, by device and inode (every spelling of its
 * path, symbolic links and hard links included, is the one file SQLite shares its locks on).
 */
const openDatabases = new Map<string, OpenDatabase>();

/**
 * One connection of this process to a database file: a connection of a provider, or a checkpointer
 * thread's. While any is open, the -shm descriptors opened through one of them stay open: POSIX record
 * locks belong to the process, and closing any descriptor of a file drops every lock the process holds
 * on it, SQLite's included (its read locks, and the one that tells another process the wal-index is in
 * use). The last one released closes them: no connection of this process is left to hold a lock on the
 * file then. Kept any longer, a long-lived process would keep one descriptor per database it wrote.
 */
export class DatabaseUse {
  readonly #key: string;
  #released = false;

  private constructor(key: string) {
    this.#key = key;
    const known = openDatabases.get(key);
    if (known === undefined) openDatabases.set(key, { connections: 1, shm: new Map() });
    else known.connections += 1;
  }

  /**
   * Counts a connection just opened to the database file at `location` (call it once the handle is
   * open: the file exists then); undefined when there is no file to find (a database in memory).
   */
  static open(location: string): DatabaseUse | undefined {
    try {
      const stats = statSync(location);
      return new DatabaseUse(`${stats.dev}:${stats.ino}`);
    } catch {
      return undefined;
    }
  }

  /** Counts another connection to the same database file (a checkpointer thread's), released on its own. */
  another(): DatabaseUse {
    return new DatabaseUse(this.#key);
  }

  /**
   * A descriptor of the -shm file of the database at `location`, opened once and kept until the last
   * connection of this process to the database is released; undefined when there is none.
   */
  shmDescriptor(location: string): number | undefined {
    const database = openDatabases.get(this.#key);
    if (this.#released || database === undefined) return undefined;
    const path = `${location}-shm`;
    const known = database.shm.get(path);
    if (known !== undefined) return known;
    try {
      const descriptor = openSync(path, 'r');
      database.shm.set(path, descriptor);
      return descriptor;
    } catch {
      return undefined;
    }
  }

  /**
   * Counts this connection closed (once its handle is closed; again is a no-op). The last one closes
   * the -shm descriptors kept for the database.
   */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    const database = openDatabases.get(this.#key);
    if (database === undefined) return;
    database.connections -= 1;
    if (database.connections > 0) return;
    openDatabases.delete(this.#key);
    for (const descriptor of database.shm.values()) {
      try {
        closeSync(descriptor);
      } catch {
        // Already closed: nothing is left to release.
      }
    }
  }
}
