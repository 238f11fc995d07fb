import { closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { CrewlineError } from '@crewline/events';
import Database from 'better-sqlite3';
import { nativeModuleError, sqliteCode, sqliteError, toCrewlineError } from '../errors.js';
import type { ResolvedSqliteProviderOptions } from '../options.js';
import { retryWhenBusySync } from './busy-retry.js';
import { cannotOpenError } from './cannot-open.js';
import { Connection } from './connection.js';
import { afterHotJournal } from './hot-journal.js';
import { checkIntegrity } from './integrity-check.js';
import { checkSchema, initializeSchema } from './schema-version.js';
import { hasSideFiles, removeCreatedSideFiles } from './side-files.js';

/** True when the location is a database that lives only in this process. */
export function isMemoryLocation(location: string): boolean {
  return location === ':memory:';
}

/**
 * Whether a database file exists at `location`. Refuses a directory. Only `stat` is used: opening
 * and closing a database file with raw `fs` would drop SQLite's POSIX locks held by this process.
 */
export function databaseExists(location: string): boolean {
  if (isMemoryLocation(location)) return true;
  try {
    const stats = statSync(location);
    if (stats.isDirectory()) {
      throw sqliteError(
        'invalid_config',
        `"${location}" is a directory; SqliteProvider needs a database file path (or use JsonProvider for a directory)`,
      );
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * A better-sqlite3 handle on `location`. The first one a process makes loads the driver's compiled
 * module; when that fails, so does every open after it, and the error says the module is not built
 * (errors.ts, nativeModuleError) rather than that this database cannot be opened or read.
 */
function openDatabase(location: string, options: Database.Options): Database.Database {
  try {
    return new Database(location, options);
  } catch (error) {
    throw nativeModuleError(error) ?? error;
  }
}

/** Creates the database file with owner-only permissions (SQLite gives -wal and -shm the same mode). */
function createPrivateFile(location: string): void {
  mkdirSync(dirname(location), { recursive: true });
  try {
    closeSync(openSync(location, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/**
 * Runs the integrity check (see integrity-check.ts) through a read-only handle of its own: a
 * read-write handle could write before the verdict, if only by copying a WAL left by a crashed writer
 * back into the file when it closes. Returns the error writes must fail with; undefined when sound.
 */
function findDamage(location: string, options: ResolvedSqliteProviderOptions): CrewlineError | undefined {
  return afterHotJournal(location, options, () => findDamageOnce(location, options));
}

function findDamageOnce(location: string, options: ResolvedSqliteProviderOptions): CrewlineError | undefined {
  const hadSideFiles = hasSideFiles(location);
  let db: Database.Database;
  try {
    db = openDatabase(location, { readonly: true, fileMustExist: true, timeout: options.busyTimeoutMs });
  } catch (error) {
    if (sqliteCode(error) === 'SQLITE_CANTOPEN') throw cannotOpenError(location, error);
    throw toCrewlineError(error, 'read', location);
  }
  try {
    return retryWhenBusySync(() => checkIntegrity(db, location), options.busyRetryMs, 'read', location);
  } finally {
    db.close();
    removeCreatedSideFiles(location, hadSideFiles, options.busyTimeoutMs);
  }
}

/**
 * Opens (creating when asked) the database at `location` for writing, sets its pragmas and brings
 * its schema to the current version. A database that fails SQLite's quick_check is opened read-only
 * instead, with the error its writes fail with as `damage`: a user can still get its data out.
 */
export function openConnection(location: string, options: ResolvedSqliteProviderOptions): Connection {
  const inMemory = isMemoryLocation(location);
  if (!inMemory && !databaseExists(location)) createPrivateFile(location);
  // A database in memory has no file to damage (and a second handle would open another database).
  const damage = inMemory ? undefined : findDamage(location, options);
  if (damage !== undefined) {
    let connection: Connection | undefined;
    try {
      connection = openReadConnection(location, options, damage);
    } catch {
      // Not even the schema reads: what quick_check found says more than the error of that read.
    }
    if (connection === undefined) throw damage;
    return connection;
  }
  let db: Database.Database;
  try {
    db = openDatabase(location, { timeout: options.busyTimeoutMs });
  } catch (error) {
    if (CrewlineError.isInstance(error)) throw error;
    throw sqliteError('invalid_config', `cannot open database "${location}": ${(error as Error).message}`, {
      cause: error,
    });
  }
  let connection: Connection | undefined;
  try {
    retryWhenBusySync(
      () => {
        // Read first: the switch to WAL writes the file's header, and a file refused here (another
        // application's, a newer schema) must stay as it was.
        checkSchema(db, location);
        db.pragma('journal_mode = WAL');
        db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
        initializeSchema(db, location);
      },
      options.busyRetryMs,
      'write',
      location,
    );
    connection = new Connection(db, location);
    if (!inMemory) connection.checkpointOffThread(options);
    // A write that crosses the bound copies the WAL back into the database itself; idle-time
    // checkpoints (see `noteWrite`) normally run long before, off the write path.
    connection.boundWal();
    return connection;
  } catch (error) {
    db.close();
    // Once there is one, the connection is counted among the process's connections to the database
    // until it is closed (see database-use.ts); its handle is closed already.
    connection?.close();
    throw toCrewlineError(error, 'write', location);
  }
}

/**
 * Opens an existing database read-only, for reading: nothing is created, neither the file nor the
 * schema (a 0-byte or empty database stays as it is). Undefined when the database holds no crewline
 * schema yet (nothing to read); typed errors for another application's database, a newer schema or a
 * file that is not a database. `damage`: see {@link Connection.damage}.
 */
export function openReadConnection(
  location: string,
  options: ResolvedSqliteProviderOptions,
  damage?: CrewlineError,
): Connection | undefined {
  return afterHotJournal(location, options, () => openReadConnectionOnce(location, options, damage));
}

function openReadConnectionOnce(
  location: string,
  options: ResolvedSqliteProviderOptions,
  damage?: CrewlineError,
): Connection | undefined {
  const hadSideFiles = hasSideFiles(location);
  const closeRead = (db: Database.Database) => {
    db.close();
    removeCreatedSideFiles(location, hadSideFiles, options.busyTimeoutMs);
  };
  let db: Database.Database;
  try {
    db = openDatabase(location, { readonly: true, fileMustExist: true, timeout: options.busyTimeoutMs });
  } catch (error) {
    if (CrewlineError.isInstance(error)) throw error;
    if (sqliteCode(error) === 'SQLITE_CANTOPEN') throw cannotOpenError(location, error);
    throw sqliteError('invalid_config', `cannot open database "${location}": ${(error as Error).message}`, {
      cause: error,
    });
  }
  try {
    const hasSchema = retryWhenBusySync(
      () => {
        // A connection setting, not a write: `stats()` reports what reads and writes run with.
        db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
        return checkSchema(db, location);
      },
      options.busyRetryMs,
      'read',
      location,
    );
    if (hasSchema) {
      const connection = new Connection(db, location, false, damage);
      connection.onClose(() => removeCreatedSideFiles(location, hadSideFiles, options.busyTimeoutMs));
      return connection;
    }
    closeRead(db);
    return undefined;
  } catch (error) {
    closeRead(db);
    throw toCrewlineError(error, 'read', location);
  }
}
