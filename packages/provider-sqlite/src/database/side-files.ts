import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';

/** Whether the database's `-wal` or `-shm` file exists now. */
export function hasSideFiles(location: string): boolean {
  return existsSync(`${location}-wal`) || existsSync(`${location}-shm`);
}

/**
 * Removes the `-wal` and `-shm` files that a read-only handle's reads created beside a database in
 * WAL mode (`hadSideFiles`: whether they were there before it opened), once that handle is closed.
 *
 * Why: a read-only handle creates them and never removes them, so `crewline checkpoint list` of a
 * database, even a damaged one, left two new files beside it. Only SQLite knows whether another
 * connection still uses them (a live writer's WAL must not be touched): a read-write handle that
 * reads once and closes removes them when it is the last connection, as every last writer does, and
 * leaves them otherwise. Its WAL holds no frames then (none existed before this read), so the close
 * copies nothing into the file. Best effort: a file this process may not write keeps them.
 */
export function removeCreatedSideFiles(location: string, hadSideFiles: boolean, busyTimeoutMs: number): void {
  if (hadSideFiles || !hasSideFiles(location)) return;
  try {
    const db = new Database(location, { fileMustExist: true, timeout: busyTimeoutMs });
    try {
      db.pragma('user_version', { simple: true });
    } finally {
      db.close();
    }
  } catch {
    // Best effort: the files stay, as they did before.
  }
}
