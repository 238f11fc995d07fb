import { mkdirSync, readFileSync, rmdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ProcessIdentity, processIsGone, thisProcess } from '@crewline/runtime-state/internal';
import { errorCode } from './errors.js';

// The short-lived mutex under which a lineage lock file is taken over, renewed or released (see
// lineage-lock.ts): a directory `<lock>.takeover`, created with mkdir (which fails when it exists),
// removed when the change is made. It holds a file naming its process, so that a mutex whose process
// was killed inside it (a few system calls: a read and a rename) is cleared at once when that process
// is provably gone, not only once it is old: the crash trials killed a run ending (its release under
// the mutex) and the resume right after it found the mutex held, waited and gave up.

/** A takeover mutex older than this belongs to a process that died while holding it. */
const abandonedMutexMs = 10_000;
/** How long a renewal, release or takeover waits for another process's turn under the mutex. */
export const mutexWaitMs = 200;

/** The file inside a mutex directory naming the process that holds it. */
function holderFile(mutex: string): string {
  return join(mutex, 'holder');
}

/**
 * Runs `action` holding the mutex of the lock at `path`, or returns false when another process held
 * it for longer than {@link mutexWaitMs} (its holder is changing the lock right now).
 */
export function withLockMutex(path: string, action: () => void): boolean {
  const mutex = `${path}.takeover`;
  const giveUpAt = Date.now() + mutexWaitMs;
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

/** Creates the mutex directory and names this process in it; false when it exists and is not abandoned. */
function enterMutex(mutex: string): boolean {
  if (createMutex(mutex)) return true;
  if (!isAbandoned(mutex)) return false;
  // One process at a time clears an abandoned mutex: the one holding its reaper directory. Cleared
  // by two at once (each removing it and creating it again), the second removed the mutex the first
  // had just created and entered, and both were inside; moving it aside and comparing inodes does
  // not help either, as a new directory may get the inode of the one just removed.
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

/** mkdir of the mutex, then the file naming this process (a mutex without it is judged by age). */
function createMutex(mutex: string): boolean {
  if (!createDirectory(mutex)) return false;
  try {
    writeFileSync(holderFile(mutex), JSON.stringify(thisProcess()), { mode: 0o600 });
  } catch {
    // Best effort: without the file the mutex is cleared once it is old, as before.
  }
  return true;
}

function removeMutex(mutex: string): void {
  try {
    unlinkSync(holderFile(mutex));
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
  rmdirSync(mutex);
}

/** mkdir: false when the directory exists. */
export function createDirectory(path: string): boolean {
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
 * than {@link abandonedMutexMs} (a mutex naming no process: its creator was killed between mkdir and
 * writing its name, or wrote it on a system that tells no pid namespace).
 */
function isAbandoned(mutex: string): boolean {
  if (isOld(mutex)) return true;
  let holder: ProcessIdentity;
  try {
    holder = JSON.parse(readFileSync(holderFile(mutex), 'utf8')) as ProcessIdentity;
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

/** A directory older than {@link abandonedMutexMs}. */
function isOld(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs >= abandonedMutexMs;
  } catch {
    // Gone meanwhile: not abandoned, someone just left it.
    return false;
  }
}
