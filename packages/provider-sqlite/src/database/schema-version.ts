import type Database from 'better-sqlite3';
import { sqliteCode, sqliteError } from '../errors.js';
import {
  APPLICATION_MARKER,
  EVENT_REFERENCES_MARKER_KEY,
  HOLDER_PROCESS_COLUMN,
  hasColumn,
  OLDEST_SCHEMA_VERSION,
  SCHEMA_VERSION,
  SEGMENTS_MARKER_KEY,
  schemaStatements,
  schemaUpgrades,
} from './schema.js';

/** The tables every version of the layout has (see schema.ts). */
const crewlineTables = ['crewline_meta', 'checkpoints', 'streams', 'events', 'chunks'];

/** Indexes only version 1 has: the upgrade to version 2 drops them. */
const versionOneIndexes = ['checkpoints_by_branch', 'checkpoints_by_lineage'];

/** The table version 4 added (the upgrade from version 3 creates it). */
const versionFourTable = 'leases';

function userVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** The crewline marker of the database, if it has a `crewline_meta` table of crewline's shape. */
function readMarker(db: Database.Database): unknown {
  try {
    return db.prepare("SELECT value FROM crewline_meta WHERE key = 'application'").pluck().get();
  } catch (error) {
    // No such table, or another application's table of that name without these columns. Anything
    // else (a busy or damaged database) is not evidence about whose database this is.
    if (sqliteCode(error) !== 'SQLITE_ERROR') throw error;
    return undefined;
  }
}

/** True when the database holds the marker row `key` (versions 5 and 6, see `schemaUpgrades`). */
function hasMarker(db: Database.Database, key: string): boolean {
  return db.prepare('SELECT value FROM crewline_meta WHERE key = ?').pluck().get(key) !== undefined;
}

/**
 * The schema version of the database: `PRAGMA user_version`, or 0 for a database that holds nothing
 * yet. When `user_version` reads 0 although the database holds tables (a tool or a user reset it, a
 * copy lost it), the version is recognised from the tables: crewline's five tables and its marker,
 * with version 1's indexes, without them, or with version 4's `leases` table (and the marker rows of
 * versions 5 and 6, and version 7's `holder_process` column). Reading 0 there would
 * list none of the checkpoints and let the first write lay the schema over them. Tables that are not
 * crewline's are refused.
 */
export function schemaVersionOf(db: Database.Database, location: string): number {
  const stored = userVersion(db);
  if (stored !== 0) return stored;
  const names = db
    .prepare("SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'")
    .pluck()
    .all() as string[];
  if (names.length === 0) return 0;
  if (!crewlineTables.every((table) => names.includes(table))) {
    throw otherApplication(location, `it has tables ${names.slice(0, 3).join(', ')}`);
  }
  if (readMarker(db) !== APPLICATION_MARKER) throw otherApplication(location, 'no crewline marker');
  if (names.includes(versionFourTable)) {
    if (hasColumn(db, versionFourTable, HOLDER_PROCESS_COLUMN)) return 7;
    if (hasMarker(db, EVENT_REFERENCES_MARKER_KEY)) return 6;
    return hasMarker(db, SEGMENTS_MARKER_KEY) ? 5 : 4;
  }
  // Versions 2 and 3 have the same tables. Taking a version 2 database for version 3 is safe: this
  // package reads both kinds of rows, and older packages then refuse the file. Taking a version 3
  // database for version 2 would let those older packages misread its rows.
  return versionOneIndexes.some((index) => names.includes(index)) ? 1 : 3;
}

function newerSchema(location: string, version: number) {
  return sqliteError(
    'unsupported_version',
    `database "${location}" has schema version ${version}, newer than this @crewline/provider-sqlite understands (${SCHEMA_VERSION}); upgrade @crewline/provider-sqlite`,
  );
}

function otherApplication(location: string, evidence: string) {
  return sqliteError(
    'invalid_config',
    `"${location}" is a SQLite database of another application (${evidence}); give crewline its own database file`,
  );
}

/**
 * Whether `db` holds this package's schema (the current version or an older one it reads): true
 * when it does, false when it holds nothing yet (a new, empty database); throws for a newer schema
 * or another application's tables.
 */
export function checkSchema(db: Database.Database, location: string): boolean {
  const version = schemaVersionOf(db, location);
  if (version > SCHEMA_VERSION) throw newerSchema(location, version);
  if (version < OLDEST_SCHEMA_VERSION) return false;
  if (readMarker(db) !== APPLICATION_MARKER) throw otherApplication(location, 'no crewline marker');
  return true;
}

/**
 * Creates the schema in a new database, upgrades an older version of it (see `schemaUpgrades`), or
 * writes back a `user_version` that was lost, so that a writable connection always works on the
 * current layout and the version is stored again.
 */
export function initializeSchema(db: Database.Database, location: string): void {
  if (checkSchema(db, location) && userVersion(db) === SCHEMA_VERSION) return;
  db.transaction(() => {
    // Checked again inside the write lock: another process may have created or upgraded the schema.
    if (userVersion(db) === SCHEMA_VERSION) return;
    const current = schemaVersionOf(db, location);
    if (current > SCHEMA_VERSION) throw newerSchema(location, current);
    if (current < OLDEST_SCHEMA_VERSION) {
      db.exec(schemaStatements);
    } else {
      for (let version = current; version < SCHEMA_VERSION; version += 1) {
        const upgrade = schemaUpgrades[version]!;
        if (typeof upgrade === 'string') db.exec(upgrade);
        else upgrade(db);
      }
    }
    // Also writes back a user_version that was lost: the tables alone said which version this is.
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
  if (readMarker(db) !== APPLICATION_MARKER) throw otherApplication(location, 'no crewline marker');
}
