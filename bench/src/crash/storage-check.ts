// What a killed run left behind, checked the way a reader would see it: every visible checkpoint file
// (JSON) or every listed checkpoint (SQLite) must read and validate; a SQLite database must pass
// `PRAGMA integrity_check`. Temp files a killed JSON writer leaves are hidden by design (dot names);
// they are counted, not treated as torn. The JSON provider's own dot directories are not checkpoints.
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import {
  type CheckpointDocument,
  type CheckpointProvider,
  createProviderRegistry,
  loadCheckpoint,
  type ProviderRegistry,
  providerEntryOf,
} from '@crewline/runtime-state';
import Database from 'better-sqlite3';

export type ProviderName = 'json' | 'sqlite';

/** One checkpoint (or file) that a reader can see but not read as a valid checkpoint. */
export interface TornCheckpoint {
  reference: string;
  error: string;
}

export interface StorageCheck {
  /** Checkpoints the provider lists. */
  listed: number;
  /** Visible files or listed checkpoints that do not read and validate (the bar: 0). */
  torn: TornCheckpoint[];
  /** JSON: temp files a writer killed mid-write left (hidden; swept by the next writer). */
  tempFiles: number;
  /** SQLite: the result of `PRAGMA integrity_check` ('ok' when sound); JSON: undefined. */
  integrity?: string;
  /** The latest checkpoint's document, when there is one and it reads. */
  latest?: CheckpointDocument;
  /** Why the latest checkpoint could not be loaded, when there are checkpoints but it failed. */
  latestError?: string;
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function catalogWith(provider: CheckpointProvider): ProviderRegistry {
  return createProviderRegistry([providerEntryOf(provider)]);
}

/**
 * Every visible file under a directory, as paths (none when it does not exist), and the number of
 * temp files a killed writer left (empty spares aside). Dot names are hidden by the provider's design — its temp files,
 * and its own bookkeeping directories (the id index `.ids/`, the lock files `.leases/`) — so a file
 * under a dot-named directory is not a checkpoint anyone is shown.
 */
function visibleFilesUnder(directory: string): { files: string[]; tempFiles: number } {
  if (!existsSync(directory)) return { files: [], tempFiles: 0 };
  const files: string[] = [];
  let tempFiles = 0;
  for (const entry of readdirSync(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if (entry.name.startsWith('.') && entry.name.endsWith('.tmp')) {
      // An empty spare (`.spare.<pid>.<hex>.tmp`) is a file created ahead for a write that had not
      // started: nothing was cut off. One with bytes in it was being written, like any temp file.
      if (!(entry.name.startsWith('.spare.') && statSync(path).size === 0)) tempFiles += 1;
    } else if (
      !relative(directory, path)
        .split(sep)
        .some((segment) => segment.startsWith('.'))
    )
      files.push(path);
  }
  return { files, tempFiles };
}

async function checkJson(location: string): Promise<StorageCheck> {
  const provider = new JsonProvider();
  const catalog = catalogWith(provider);
  const torn: TornCheckpoint[] = [];
  const { files, tempFiles } = visibleFilesUnder(location);
  // Every visible file, whether the provider lists it or not: a torn file that listing skips is
  // still a torn file a user (or another tool) can see.
  for (const file of files) {
    try {
      await loadCheckpoint(file, catalog);
    } catch (error) {
      torn.push({ reference: file, error: describe(error) });
    }
  }
  const listed = existsSync(location) ? await provider.list(location) : [];
  return { listed: listed.length, torn, tempFiles, ...(await latestOf(location, listed.length, catalog)) };
}

/**
 * Checks a copy of the database (and its WAL), so that opening it here — which recovers the WAL and
 * may fold it into the database on close — leaves the killed run's files exactly as the resuming
 * process will find them.
 */
async function checkSqlite(location: string, scratch: string): Promise<StorageCheck> {
  if (!existsSync(location)) return { listed: 0, torn: [], tempFiles: 0 };
  mkdirSync(scratch, { recursive: true });
  const copy = join(scratch, basename(location));
  copyFileSync(location, copy);
  if (existsSync(`${location}-wal`)) copyFileSync(`${location}-wal`, `${copy}-wal`);
  const database = new Database(copy, { fileMustExist: true });
  let integrity: string;
  try {
    const rows = database.pragma('integrity_check') as { integrity_check: string }[];
    integrity = rows.map((row) => row.integrity_check).join('; ');
  } catch (error) {
    integrity = describe(error);
  } finally {
    database.close();
  }
  const provider = new SqliteProvider();
  const catalog = catalogWith(provider);
  const torn: TornCheckpoint[] = [];
  try {
    let listed: Awaited<ReturnType<SqliteProvider['list']>>;
    try {
      listed = await provider.list(copy);
    } catch (error) {
      return { listed: 0, torn: [{ reference: copy, error: describe(error) }], tempFiles: 0, integrity };
    }
    for (const entry of listed) {
      try {
        await loadCheckpoint(`${copy}#${entry.id}`, catalog);
      } catch (error) {
        torn.push({ reference: `${location}#${entry.id}`, error: describe(error) });
      }
    }
    return {
      listed: listed.length,
      torn,
      tempFiles: 0,
      integrity,
      ...(await latestOf(copy, listed.length, catalog)),
    };
  } finally {
    await provider.close();
  }
}

async function latestOf(
  location: string,
  listed: number,
  catalog: ProviderRegistry,
): Promise<Pick<StorageCheck, 'latest' | 'latestError'>> {
  if (listed === 0) return {};
  try {
    return { latest: (await loadCheckpoint(location, catalog)).document };
  } catch (error) {
    return { latestError: describe(error) };
  }
}

/**
 * Checks what a killed run left at `location`. `scratch` is an empty directory the check may use
 * (SQLite is checked on a copy there).
 */
export function checkStorage(
  provider: ProviderName,
  location: string,
  scratch: string,
): Promise<StorageCheck> {
  return provider === 'json' ? checkJson(location) : checkSqlite(location, scratch);
}

/** Torn files visible: checkpoints that do not read, plus a database that fails its integrity check. */
export function tornCount(check: StorageCheck): number {
  return check.torn.length + (check.integrity !== undefined && check.integrity !== 'ok' ? 1 : 0);
}
