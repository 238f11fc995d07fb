import { closeSync, linkSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { errorCode, jsonError } from './errors.js';

// Small files that must appear whole under their name or not at all (a lineage lock, its takeover
// mutex): a reader never finds one half written, and of two processes creating one at once exactly
// one succeeds.

/** A temp file name beside `path`, unique to this process and call. */
export function tempPath(path: string): string {
  return `${path}.${process.pid}.${Math.random().toString(16).slice(2)}.tmp`;
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
  const temp = tempPath(path);
  writeNew(temp, text);
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

/** Creates the new file `path` holding `text`; a `write_failed` error when it exists already. */
export function writeNew(path: string, text: string): void {
  if (!createThenWrite(path, text)) throw jsonError('write_failed', `temp lock file ${path} exists already`);
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
