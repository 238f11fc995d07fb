import Database from 'better-sqlite3';
import { sqliteCode } from '../errors.js';
import type { ResolvedSqliteProviderOptions } from '../options.js';

/** True for the error a read-only open gives when the database's rollback journal is hot. */
function hasHotJournal(error: unknown): boolean {
  for (let cause = error, depth = 0; cause !== undefined && depth < 4; depth += 1) {
    if (sqliteCode(cause) === 'SQLITE_READONLY_ROLLBACK') return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Runs `open` (a read-only open and first read), and once more after rolling back a hot journal if
 * that is what refused it. A process killed while it created the database (the switch to WAL mode
 * goes through a rollback journal), or while it wrote in rollback-journal mode, leaves a hot journal
 * that only a connection allowed to write can roll back: SQLite refuses a read-only open of such a
 * file (`SQLITE_READONLY_ROLLBACK`), so a resume after that kill could not even list the database.
 * The first read of a read-write connection rolls it back, as the next writer would, and brings the
 * file back to its last committed state; nothing else is written. Best effort: a file that cannot be
 * written (a read-only mount) keeps the typed error of the second attempt.
 */
export function afterHotJournal<T>(
  location: string,
  options: ResolvedSqliteProviderOptions,
  open: () => T,
): T {
  try {
    return open();
  } catch (error) {
    if (!hasHotJournal(error)) throw error;
  }
  try {
    const db = new Database(location, { fileMustExist: true, timeout: options.busyTimeoutMs });
    try {
      db.pragma('user_version', { simple: true });
    } finally {
      db.close();
    }
  } catch {
    // The second attempt reports what is wrong.
  }
  return open();
}
