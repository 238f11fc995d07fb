import { closeSync, linkSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { errorCode, jsonError } from '../errors.js';
import { writerNameDigits } from '../write/temp-writer.js';

// Small files that must appear whole under their name or not at all (a lineage lock, its takeover
// mutex): a reader never finds one half written, and of two processes creating one at once exactly
// one succeeds.

/**
 * A temp file name beside `path`: `<path>.<pid>.<8 hex>.tmp`, the hex digits those of every temp
 * file this package writes (where the writer runs, then a counter; see temp-writer.ts), so that the
 * first-use sweep can tell the temp file of a lock write whose process was killed in the middle of
 * it and remove it (see {@link parseWholeFileTempName}); with random digits nothing proved it left
 * over, and each one stayed forever.
 */
function tempPath(path: string): string {
  return `${path}.${process.pid}.${writerNameDigits()}.tmp`;
}

const tempNamePattern = /^(.+)\.(\d{1,10})\.([0-9a-f]{8})\.tmp$/;

/**
 * The file a temp file name of {@link tempPath} was written for (its name in the same directory),
 * its writer's pid and hex digits; undefined for any other name (the random digits older versions
 * wrote are longer: they prove nothing about their writer).
 */
export function parseWholeFileTempName(
  name: string,
): { target: string; pid: number; digits: string } | undefined {
  const match = tempNamePattern.exec(name);
  if (!match) return undefined;
  return { target: match[1]!, pid: Number(match[2]), digits: match[3]! };
}

/** Attempts at a fresh temp name: one is taken only by a killed predecessor that had this pid. */
const tempNameAttempts = 8;

/**
 * Writes `text` to a new temp file beside `path` and returns its path. A counted name can be one a
 * killed process with this very pid left (a container restarting its program gets the same pid):
 * the next name is tried then.
 */
export function writeTemp(path: string, text: string): string {
  for (let attempt = 1; ; attempt += 1) {
    const temp = tempPath(path);
    if (createThenWrite(temp, text)) return temp;
    if (attempt === tempNameAttempts)
      throw jsonError('write_failed', `temp lock file ${temp} exists already (and ${attempt - 1} before it)`);
  }
}

export function unlinkIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

/**
 * Creates `path` holding `text` only if nothing has that name; false when something does. Written to
 * a temp file, then hard-linked to its name (which fails when the name exists), so it appears whole.
 * Where the file system has no hard links it is created empty, then written: readers must then take
 * a file that does not parse for one being written (and judge it by age).
 */
export function createWholeFile(path: string, text: string): boolean {
  const temp = writeTemp(path, text);
  try {
    linkSync(temp, path);
    return true;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error;
    return createThenWrite(path, text);
  } finally {
    unlinkIfPresent(temp);
  }
}

/** O_EXCL create, then write: false when the file exists. */
function createThenWrite(path: string, text: string): boolean {
  let descriptor: number;
  try {
    descriptor = openSync(path, 'wx', 0o600);
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(descriptor, text);
  } finally {
    closeSync(descriptor);
  }
  return true;
}
