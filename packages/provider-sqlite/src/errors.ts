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
 * Turns anything thrown while talking to SQLite into a typed error. Crewline errors pass through
 * untouched; SQLite's own errors become `write_failed`/`read_failed` with the original as `cause`.
 */
export function toCrewlineError(error: unknown, what: 'write' | 'read', location: string): CrewlineError {
  if (CrewlineError.isInstance(error)) return error;
  const code = sqliteCode(error);
  const reason = error instanceof Error ? error.message : String(error);
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') {
    return sqliteError(
      'corrupt_checkpoint',
      `database ${location} is damaged (${reason}); restore it from a backup or start a new database file`,
      { cause: error },
    );
  }
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
