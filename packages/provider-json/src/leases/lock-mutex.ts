import { mkdirSync, readFileSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { type ProcessIdentity, processIsGone, thisProcess } from '@crewline/runtime-state/internal';
import { errorCode } from '../errors.js';
import { createWholeFile } from '../read/whole-file.js';

// The short-lived mutex under which a lineage lock file is taken over, renewed or released (see
// lineage-lock.ts): `<lock>.takeover`, which exists while a process changes the lock. It is a file
// naming its process, and appears whole (written to a temp file, then hard-linked to its name, which
// fails when the name exists), so that a mutex whose process was killed inside it (a read and a
// rename) is cleared at once when that process is provably gone, not only once it is 10 s old: the
// crash trials killed a run while it released its lock, and the resume right after found the mutex
// held, waited and gave up. A mutex naming no process (an empty directory, from an older version of
// this package) is cleared by age, as before.

/** A takeover mutex older than this belongs to a process that died while holding it. */
const abandonedMutexMs = 10_000;
/** How long a renewal, release or takeover waits for another process's turn under the mutex. */
export const mutexWaitMs = 200;

/**
 * Runs `action` holding the mutex of the lock at `path`, or returns false when another process held
 * it for longer than `waitMs` (its holder is changing the lock right now). A `waitMs` of 0 tries once.
 */
export function withLockMutex(path: string, action: () => void, waitMs = mutexWaitMs): boolean {
  const mutex = `${path}.takeover`;
  const giveUpAt = Date.now() + waitMs;
  while (!enterMutex(mutex)) {
    if (Date.now() >= giveUpAt) return false;
    // Held for a read and a rename: a millisecond or two is plenty.
    sleepSync(2);
  }
  try {
    action();
  } finally {
    removeMutex(mutex);
  }
  return true;
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Creates the mutex, naming this process; false when it exists and is not abandoned. */
function enterMutex(mutex: string): boolean {
  if (createMutex(mutex)) return true;
  if (!isAbandoned(mutex)) return false;
  // One process at a time clears an abandoned mutex: the one holding its reaper directory. Cleared
  // by two at once (each removing it and creating it again), the second removed the mutex the first
  // had just created and entered, and both were inside; moving it aside and comparing inodes does
  // not help either, as a new file may get the inode of the one just removed.
  const reaper = `${mutex}.reaper`;
  if (!createDirectory(reaper)) {
    // A reaper killed while clearing (a window of a few system calls): cleared the old way.
    if (!isOld(reaper)) return false;
    try {
      rmdirSync(reaper);
    } catch {
      return false;
    }
    if (!createDirectory(reaper)) return false;
  }
  try {
    // Looked at again under the reaper: another reaper may have cleared it meanwhile and a process
    // may be inside a new one.
    if (isAbandoned(mutex)) removeMutex(mutex);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  } finally {
    rmdirSync(reaper);
  }
  return createMutex(mutex);
}

/** The mutex, whole, naming this process, only if none exists; false when one does. */
function createMutex(mutex: string): boolean {
  return createWholeFile(mutex, JSON.stringify(thisProcess()));
}

/** Removes the mutex: a file, or the directory an older version of this package made. */
function removeMutex(mutex: string): void {
  try {
    unlinkSync(mutex);
  } catch (error) {
    const code = errorCode(error);
    if (code !== 'EISDIR' && code !== 'EPERM') throw error;
    rmdirSync(mutex);
  }
}

/** mkdir: false when the directory exists. */
function createDirectory(path: string): boolean {
  try {
    mkdirSync(path);
    return true;
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error;
    return false;
  }
}

/**
 * A mutex left by a process that died holding it: the process it names is provably gone (see
 * processIsGone: this machine, this pid namespace and boot, no such live process), or it is older
 * than {@link abandonedMutexMs} (one that names no process: a directory from an older version, or
 * made where hard links fail and its creator was killed before writing its name).
 */
function isAbandoned(mutex: string): boolean {
  if (isOld(mutex)) return true;
  let holder: ProcessIdentity;
  try {
    holder = JSON.parse(readFileSync(mutex, 'utf8')) as ProcessIdentity;
  } catch {
    return false;
  }
  return (
    typeof holder === 'object' &&
    holder !== null &&
    typeof holder.host === 'string' &&
    typeof holder.pid === 'number' &&
    processIsGone(holder)
  );
}

/** A file or directory older than {@link abandonedMutexMs}. */
function isOld(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs >= abandonedMutexMs;
  } catch {
    // Gone meanwhile: not abandoned, someone just left it.
    return false;
  }
}
