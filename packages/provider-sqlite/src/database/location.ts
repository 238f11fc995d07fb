import { statSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { sqliteError } from '../errors.js';

const databaseSuffix = /\.(?:db|db3|sqlite|sqlite3)$/i;

/**
 * Canonical form of a SQLite location: `.db` is appended when the file name has no suffix
 * (`./.checkpoints` becomes `./.checkpoints.db`); trailing separators are dropped. `:memory:` is kept.
 */
export function resolveDatabaseLocation(location: string): string {
  if (typeof location !== 'string' || location.length === 0) {
    throw sqliteError(
      'invalid_config',
      'SQLite location is empty; pass a database file path such as "./.checkpoints.db"',
    );
  }
  if (location.includes('\0')) {
    throw sqliteError('invalid_config', 'SQLite location contains a NUL character; pass a plain file path');
  }
  if (location === ':memory:') return location;
  const trimmed = location.replace(/[\\/]+$/, '');
  if (trimmed.length === 0) {
    throw sqliteError(
      'invalid_config',
      `SQLite location "${location}" names a root directory, not a database file`,
    );
  }
  return extname(basename(trimmed)) === '' ? `${trimmed}.db` : trimmed;
}

function kindOf(path: string): 'file' | 'directory' | 'missing' {
  try {
    return statSync(path).isDirectory() ? 'directory' : 'file';
  } catch {
    return 'missing';
  }
}

/**
 * Splits `db-path#id` into location and id; a bare database path means its latest checkpoint.
 * Returns undefined for what is not a SQLite reference: a URL, a directory, or a path that is
 * neither an existing file nor named like a database.
 */
export function parseDatabaseReference(reference: string): { location: string; id?: string } | undefined {
  if (typeof reference !== 'string' || /^[a-z][a-z0-9+.-]*:\/\//i.test(reference)) return undefined;
  const hash = reference.lastIndexOf('#');
  const path = hash >= 0 ? reference.slice(0, hash) : reference;
  if (path.length === 0 || path.includes('\0') || kindOf(path) === 'directory') return undefined;
  const location = resolveDatabaseLocation(path);
  if (hash >= 0) {
    const id = reference.slice(hash + 1);
    return id === '' ? { location } : { location, id };
  }
  if (location === ':memory:' || databaseSuffix.test(path)) return { location };
  if (kindOf(location) === 'file' && !/\.json$/i.test(location)) return { location };
  return undefined;
}
