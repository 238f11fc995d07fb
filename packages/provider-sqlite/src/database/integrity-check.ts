import type { CrewlineError } from '@crewline/events';
import type Database from 'better-sqlite3';
import { damagedDatabase, notADatabase, sqliteCode } from '../errors.js';

/**
 * Problems of SQLite's report quoted in the error: enough to say what is wrong, few enough for one
 * line. `quick_check(N)` also stops after N problems, so a badly damaged file is not read to its end.
 */
const reportedProblems = 2;

/**
 * Runs SQLite's `PRAGMA quick_check` on a database the provider is about to write into, and returns
 * the error every write must then fail with (undefined when the database is sound).
 *
 * Why: SQLite writes into a damaged file as long as a write does not touch a damaged page, so runs
 * kept adding checkpoints to databases whose reads already failed, burying the damage under more
 * writes. The check reads every page once (it skips the slower index-content checks of
 * `integrity_check`); it runs once per writable connection, not per write.
 */
export function checkIntegrity(db: Database.Database, location: string): CrewlineError | undefined {
  let report: string;
  try {
    const rows = db.pragma(`quick_check(${reportedProblems})`) as { quick_check: string }[];
    report = rows.map((row) => row.quick_check).join('\n');
  } catch (error) {
    // SQLite gives up on some damage (a malformed page it must follow) with an error instead of rows.
    const code = sqliteCode(error);
    if (code === 'SQLITE_NOTADB') return notADatabase(location, error);
    if (!code?.startsWith('SQLITE_CORRUPT')) throw error;
    report = (error as Error).message;
  }
  if (report === 'ok') return undefined;
  const problems = report
    .split('\n')
    // SQLite heads each attached database's problems with this line; only the problems say anything.
    .filter((line) => line.trim() !== '' && !line.startsWith('*** in database'))
    .slice(0, reportedProblems)
    .map((line) => (line.length > 200 ? `${line.slice(0, 200)}…` : line));
  return damagedDatabase(
    location,
    `failed SQLite's quick_check (${problems.join('; ')}), so crewline writes nothing into it (reads return what they still can)`,
  );
}
