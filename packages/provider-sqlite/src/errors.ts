import { CrewlineError, type CrewlineErrorCode, type CrewlineErrorOptions } from '@crewline/events';

/** The component name every error of this package carries. */
export const component = 'provider-sqlite';

/** A {@link CrewlineError} from the SQLite provider. */
export function sqliteError(
  code: CrewlineErrorCode,
  message: string,
  options?: CrewlineErrorOptions,
): CrewlineError {
  return new CrewlineError(component, code, message, options);
}

/** The SQLite result code of an error thrown by better-sqlite3 (`SQLITE_BUSY`, ...), if any. */
export function sqliteCode(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/** True for the lock errors that waiting can cure (`SQLITE_BUSY*`, `SQLITE_LOCKED*`). */
export function isBusy(error: unknown): boolean {
  const code = sqliteCode(error);
  return code !== undefined && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * A database SQLite found damaged: `finding` says how (it failed the integrity check, or a statement
 * met a malformed page, in SQLite's own words); the message then says how to get the data back.
 */
export function damagedDatabase(location: string, finding: string, cause?: unknown): CrewlineError {
  return sqliteError(
    'corrupt_checkpoint',
    `database "${location}" ${finding}; restore it from a backup, or recover what it holds with ` +
      `\`sqlite3 "${location}" ".recover" | sqlite3 recovered.db\` and point the location at the new file`,
    { cause },
  );
}

/**
 * A file SQLite does not recognise as a database at all (`SQLITE_NOTADB`: no or a damaged header).
 * `details.notADatabase` names the file, so that a command line can say it in its own words.
 */
export function notADatabase(location: string, cause?: unknown): CrewlineError {
  return sqliteError(
    'invalid_config',
    `"${location}" is not a SQLite database, or its header is damaged; point SqliteProvider at a new or existing crewline database file (restore this one from a backup if it held checkpoints), or use JsonProvider for a directory of JSON checkpoints`,
    { cause, details: { notADatabase: location } },
  );
}

/**
 * How to build better-sqlite3's native module when its install script never ran. npm before 11.16
 * has no `approve-scripts` command (npm 10, Node 20's, answers "Unknown command"), so it is named as
 * a step for the newer npm only and never joined to the rebuild with `&&`; `pnpm approve-builds`
 * builds what it approves, so a rebuild after it would compile the module a second time.
 */
const buildSkippedModule =
  'npm rebuild better-sqlite3 (with npm 11.16 or later, run npm approve-scripts better-sqlite3 first); with pnpm: pnpm approve-builds (it builds the module once approved)';

/**
 * How to build better-sqlite3's native module again when a build exists for another Node.js or
 * machine: its install script was allowed to run, so a rebuild is all it takes.
 */
const rebuildModule = 'npm rebuild better-sqlite3 (with pnpm: pnpm rebuild better-sqlite3)';

/**
 * The error for better-sqlite3's compiled module failing to load, which it does in the first
 * Database constructor of a process (and again in every one after); undefined for any other error.
 * No build of it is the usual case: a package manager that runs only the install scripts a project
 * approved (pnpm 10 by default) skips the one where better-sqlite3 builds (or downloads) its module.
 * A build for another Node.js (node_modules kept across a Node.js upgrade) or another machine fails
 * the same way, and wants a rebuild rather than an approval. `provider_unavailable`, as for a
 * provider package that is not installed: no database was opened, so nothing about one is wrong,
 * and the driver's own message lists every path its lookup tried.
 */
export function nativeModuleError(error: unknown): CrewlineError | undefined {
  if (!(error instanceof Error)) return undefined;
  const { message } = error;
  let problem: string;
  let advice = rebuildModule;
  if (message.includes('Could not locate the bindings file')) {
    problem =
      'is not built (its install script did not run, as when a package manager runs only the install scripts a project approved, or installs with --ignore-scripts)';
    advice = buildSkippedModule;
  } else if (
    message.includes('NODE_MODULE_VERSION') ||
    message.includes('was compiled against a different Node.js version')
  ) {
    problem = `is not built for this Node.js (${process.version}): it was compiled for another version`;
  } else if (
    (error as NodeJS.ErrnoException).code === 'ERR_DLOPEN_FAILED' &&
    message.includes('better_sqlite3.node')
  ) {
    problem = `is not built for this machine (${message.split('\n')[0]})`;
  } else {
    return undefined;
  }
  return sqliteError(
    'provider_unavailable',
    `better-sqlite3's native module ${problem}, so SqliteProvider cannot open any database; build it in the project: ${advice}`,
    { cause: error },
  );
}

/**
 * Turns anything thrown while talking to SQLite into a typed error naming the database file.
 * Crewline errors pass through untouched; a damaged database becomes `corrupt_checkpoint`, a file
 * that is not a database `invalid_config`, other errors `write_failed`/`read_failed`, each with the
 * original as `cause`.
 */
export function toCrewlineError(error: unknown, what: 'write' | 'read', location: string): CrewlineError {
  if (CrewlineError.isInstance(error)) return error;
  const code = sqliteCode(error);
  const reason = error instanceof Error ? error.message : String(error);
  if (code === 'SQLITE_NOTADB') return notADatabase(location, error);
  if (code?.startsWith('SQLITE_CORRUPT')) return damagedDatabase(location, `is damaged (${reason})`, error);
  if (code === 'SQLITE_FULL') {
    return sqliteError(
      'write_failed',
      `database ${location} could not grow: the disk is full; free some space`,
      {
        cause: error,
      },
    );
  }
  if (code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_PERM') {
    return sqliteError(
      what === 'write' ? 'write_failed' : 'read_failed',
      `cannot ${what} database ${location} (${reason}); check that the file and its directory are writable`,
      { cause: error },
    );
  }
  return sqliteError(
    what === 'write' ? 'write_failed' : 'read_failed',
    `${what} to database ${location} failed: ${reason}`,
    { cause: error },
  );
}
