import { accessSync, constants } from 'node:fs';
import type { CrewlineError } from '@crewline/events';
import { sqliteError } from '../errors.js';

/**
 * The error for a database file SQLite could not open read-only (`SQLITE_CANTOPEN`, which SQLite
 * gives alike for a missing file and for one this user may not read): `not_found` only when the file
 * is not there; a file (or directory) this user has no permission for is `read_failed` saying so, with
 * `details.permissionDenied`, so that a user never goes looking for a file that is there.
 */
export function cannotOpenError(location: string, error: unknown): CrewlineError {
  let reason: string | undefined;
  try {
    accessSync(location, constants.R_OK);
  } catch (accessError) {
    reason = (accessError as NodeJS.ErrnoException).code;
  }
  if (reason === 'ENOENT' || reason === 'ENOTDIR') {
    return sqliteError('not_found', `database "${location}" does not exist; check the path`, {
      cause: error,
    });
  }
  if (reason === 'EACCES' || reason === 'EPERM') {
    return sqliteError(
      'read_failed',
      `database "${location}" cannot be opened: permission denied (${reason}); give this user read permission on the file and search permission on its directories (ls -l shows the owner), or run as the user that owns it`,
      { cause: error, details: { permissionDenied: true } },
    );
  }
  // Readable as a file, yet SQLite cannot open it (its directory refuses the -wal or -shm files, say).
  return sqliteError(
    'read_failed',
    `database "${location}" cannot be opened: ${(error as Error).message}; check the permissions of the file, its -wal and -shm files and its directory`,
    { cause: error },
  );
}
