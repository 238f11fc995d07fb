// What SQLite itself says about a database file, read on a copy so that looking never changes the
// file a case is about: `PRAGMA quick_check`, and whose database it claims to be.
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';

export interface DatabaseHealth {
  /** `ok`, or what quick_check (or opening the file) reported. */
  quickCheck: string;
  /** The application marker the provider keeps in `crewline_meta`, when it can be read. */
  application?: string;
}

function message(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Checks a copy of the database at `path` (and of its WAL), made at `copyPath`. */
export function databaseHealth(path: string, copyPath: string): DatabaseHealth {
  if (!existsSync(path)) return { quickCheck: 'no database file' };
  copyFileSync(path, copyPath);
  if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${copyPath}-wal`);
  let database: Database.Database | undefined;
  try {
    database = new Database(copyPath, { fileMustExist: true });
    const rows = database.pragma('quick_check') as { quick_check: string }[];
    const quickCheck = rows.map((row) => row.quick_check).join('; ');
    let application: string | undefined;
    try {
      application = database
        .prepare("SELECT value FROM crewline_meta WHERE key = 'application'")
        .pluck()
        .get() as string | undefined;
    } catch {
      application = undefined;
    }
    return { quickCheck, ...(application !== undefined ? { application } : {}) };
  } catch (error) {
    return { quickCheck: message(error) };
  } finally {
    database?.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${copyPath}${suffix}`, { force: true });
  }
}
