import { type Dirent, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isValidCheckpointId, type Lease, type LeaseRequest, type LeaseToken } from '@crewline/runtime-state';
import {
  leaseHeldByOther,
  notTheHead,
  type ProcessIdentity,
  processIsGone,
  processRunsHere,
  thisProcess,
} from '@crewline/runtime-state/internal';
import { component, errorCode, jsonError } from '../errors.js';
import { createWholeFile, parseWholeFileTempName, unlinkIfPresent, writeTemp } from '../read/whole-file.js';
import { writerIsGone } from '../write/temp-writer.js';
import { mutexWaitMs, withLockMutex } from './lock-mutex.js';

/**
 * Lock files for runs that continue a lineage in a JSON location: `<location>/.leases/<lineage>.lock`
 * holds who continues it (owner token, holder, host, pid) and until when. It appears whole: written to
 * a temp file, then hard-linked to its name (which fails when the name exists), so of two processes
 * that continue the same checkpoint at once exactly one gets it, and nobody ever reads a lock that is
 * still being written (a reader that took an empty lock for a damaged one took it over while its
 * creator went on believing it held it: both paid for the next task). A lock is stale when its
 * process is gone (same host, same pid namespace and boot, pid not alive) or its time ran out. Every
 * change of a lock that exists — a takeover, a renewal, a release — happens under a short-lived
 * mutex directory and checks the lock again there, so a renewal cannot overwrite a takeover, a
 * release cannot remove another's lock, and two takers cannot both win.
 *
 * A claim takes the lock first and reads the head after ({@link claimLineageLock}): read before, the
 * head could move in between (its holder writing the next checkpoint and releasing) and the claim of
 * a checkpoint already continued would go through. A claim of a new lineage reads it too: a lineage
 * id is not always random (a @persist() flow kicked off by its state id derives it from flow name and
 * state id), and a second process kicking off the same new state after the first one ran it to the
 * end would otherwise be granted the lineage and run the state again.
 *
 * Files cannot fence across machines (a network file system gives no such guarantee), so the JSON
 * provider declares `leases: false`: this keeps a second process on the same machine from paying for
 * a run that is already running, no more.
 */
const leaseDirectory = '.leases';
const lockSuffix = '.lock';
const mutexSuffix = `${lockSuffix}.takeover`;
/**
 * A lock file that does not parse is held this long after it was last written: on a file system
 * without hard links it is created empty and written after (its creator is writing it right now);
 * older, it was left by a process killed while creating it.
 */
const damagedLockGraceMs = 10_000;

/** A lock file's content: who continues the run, the process that holds it, and until when. */
interface LockContent extends ProcessIdentity {
  owner: string;
  holder: string;
  expiresAt: number;
}

/** The directory of a location's lock files: a claim has changed it (its lock) when it reads the head. */
export function lockDirectory(root: string): string {
  return join(root, leaseDirectory);
}

function lockPath(root: string, lineageId: string): string {
  if (!isValidCheckpointId(lineageId))
    throw jsonError('invalid_name', `lineage id ${JSON.stringify(lineageId)} is not allowed`);
  return join(root, leaseDirectory, `${lineageId}${lockSuffix}`);
}

function readLock(path: string): LockContent | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockContent>;
    if (
      typeof parsed.owner === 'string' &&
      typeof parsed.holder === 'string' &&
      typeof parsed.host === 'string' &&
      typeof parsed.pid === 'number' &&
      typeof parsed.expiresAt === 'number' &&
      (parsed.pidNamespace === undefined || typeof parsed.pidNamespace === 'string') &&
      (parsed.bootId === undefined || typeof parsed.bootId === 'string')
    )
      return parsed as LockContent;
  } catch {
    // Not whole: being created (no hard links here) or left by a process killed while creating it.
  }
  let writtenAt = 0;
  try {
    writtenAt = statSync(path).mtimeMs;
  } catch {
    // Gone meanwhile: treated as expired, the claim goes through the takeover mutex.
  }
  return {
    owner: '',
    holder: 'another process (its lock file is being written)',
    host: '',
    pid: 0,
    expiresAt: writtenAt + damagedLockGraceMs,
  };
}

function isStale(lock: LockContent, now: number): boolean {
  // A lock written elsewhere (another container on a shared volume, another boot, an older version
  // that did not record where) is stale only once its time ran out.
  return lock.expiresAt <= now || processIsGone(lock);
}

function leaseOf(lineageId: string, lock: LockContent): Lease {
  return {
    lineageId,
    owner: lock.owner,
    holder: lock.holder,
    expiresAt: new Date(lock.expiresAt).toISOString(),
  };
}

/**
 * The refusal every provider gives a claim of a run someone else continues (the words, and the
 * `details` a command line reads to name its own flag, `--on-conflict fork`, instead of the option).
 */
function heldError(lineageId: string, lock: LockContent, now: number) {
  return leaseHeldByOther(component, lineageId, lock.holder, lock.expiresAt - now, processRunsHere(lock));
}

/** Creates the lock file, whole, only if none exists; false when one does. */
function createExclusive(path: string, content: LockContent): boolean {
  // Where hard links fail it is created empty, then written: readers wait for it (damagedLockGraceMs).
  return createWholeFile(path, JSON.stringify(content));
}

/** Replaces a lock's content atomically (a temp file renamed over it). */
function replace(path: string, content: LockContent): void {
  const temp = writeTemp(path, JSON.stringify(content));
  try {
    renameSync(temp, path);
  } catch (error) {
    unlinkIfPresent(temp);
    throw error;
  }
}

function busyError(lineageId: string, what: string) {
  return jsonError(
    'write_failed',
    `${what} the lock of run ${lineageId} waited ${mutexWaitMs} ms for another process changing it; try again`,
    { details: { lineageId } },
  );
}

/**
 * Claims a lineage for one continuation (see the module comment): takes the lock, then reads the
 * lineage's newest checkpoint with `headOf` (given the continued checkpoint, or `null` for a new
 * lineage: then its newest anywhere, `null` when it has none). When the head is not the claimed one
 * (a continued checkpoint that moved on, or a new lineage that has checkpoints), the lock is given
 * back and the claim is refused with `conflict` naming the head (`details.headId`), as the other
 * providers refuse it.
 */
export async function claimLineageLock(
  root: string,
  request: LeaseRequest,
  headOf: (checkpointId: string | null) => Promise<string | null>,
): Promise<Lease> {
  const lease = takeLineageLock(root, request);
  const { checkpointId, lineageId } = request;
  let headId: string | null;
  try {
    headId = await headOf(checkpointId);
  } catch (error) {
    releaseLineageLock(root, request);
    throw error;
  }
  if (headId === checkpointId) return lease;
  releaseLineageLock(root, request);
  throw notTheHead(component, lineageId, checkpointId, headId);
}

/** Takes the lock of a lineage: creates it, or takes over a stale one; `conflict` when it is held. */
function takeLineageLock(root: string, request: LeaseRequest): Lease {
  const { lineageId } = request;
  const path = lockPath(root, lineageId);
  const held = readLock(path);
  if (held !== undefined && held.owner !== request.owner && !isStale(held, Date.now()))
    throw heldError(lineageId, held, Date.now());
  mkdirSync(join(root, leaseDirectory), { recursive: true });
  const content: LockContent = {
    owner: request.owner,
    holder: request.holder,
    ...thisProcess(),
    expiresAt: Date.now() + request.ttlMs,
  };
  if (createExclusive(path, content)) return leaseOf(lineageId, content);
  let taken = false;
  let holder: LockContent | undefined;
  const entered = withLockMutex(path, () => {
    // Inside the mutex the lock changes only by being created (when there is none).
    const current = readLock(path);
    if (current === undefined) taken = createExclusive(path, content);
    else if (current.owner === request.owner || isStale(current, Date.now())) {
      replace(path, content);
      taken = true;
    }
    if (!taken) holder = current ?? readLock(path);
  });
  if (taken) return leaseOf(lineageId, content);
  if (entered && holder !== undefined) throw heldError(lineageId, holder, Date.now());
  throw jsonError('conflict', `run ${lineageId} is being taken over by another process; try again`, {
    details: { lineageId },
  });
}

/** Throws `conflict` unless `token` holds the lineage's lock and it has not run out. */
export function assertHoldsLineageLock(root: string, token: LeaseToken): void {
  const path = lockPath(root, token.lineageId);
  const lock = readLock(path);
  const now = Date.now();
  if (lock !== undefined && lock.owner === token.owner && lock.expiresAt > now) return;
  throw jsonError(
    'conflict',
    lock === undefined || lock.owner === token.owner
      ? `run ${token.lineageId} no longer holds its lock (it ran out or was released); this process must stop writing`
      : `run ${token.lineageId} was taken over by ${lock.holder}; this process must stop writing`,
    { details: { lineageId: token.lineageId, ...(lock ? { holder: lock.holder } : {}) } },
  );
}

/** Extends a held lock by `ttlMs` from now; `conflict` when it is no longer held. */
export function renewLineageLock(root: string, token: LeaseToken, ttlMs: number): Lease {
  const path = lockPath(root, token.lineageId);
  assertHoldsLineageLock(root, token);
  let content: LockContent | undefined;
  // Checked again and replaced under the mutex: checked outside, a takeover between the check and the
  // rename would be overwritten by this process's lock, and both would hold the run.
  const entered = withLockMutex(path, () => {
    assertHoldsLineageLock(root, token);
    content = { ...readLock(path)!, expiresAt: Date.now() + ttlMs };
    replace(path, content);
  });
  if (!entered) throw busyError(token.lineageId, 'renewing');
  return leaseOf(token.lineageId, content!);
}

/** Removes the lock if `token` holds it. */
export function releaseLineageLock(root: string, token: LeaseToken): void {
  const path = lockPath(root, token.lineageId);
  if (readLock(path)?.owner !== token.owner) return;
  // Checked again under the mutex: the lock may have run out and been taken over meanwhile.
  const entered = withLockMutex(path, () => {
    if (readLock(path)?.owner === token.owner) unlinkIfPresent(path);
  });
  if (!entered) throw busyError(token.lineageId, 'releasing');
}

/** What {@link removeLocksOfGoneProcesses} removed. */
export interface RemovedLockFiles {
  /** Lock files of processes provably gone. */
  locks: number;
  /** Temp files of lock (and mutex) writes whose process was killed in the middle of one. */
  tempFiles: number;
}

/**
 * Removes the lock files of `root` whose process is provably gone (see `processIsGone`: recorded on
 * this host, in this pid namespace and boot, and no process has its pid), the takeover mutexes left
 * beside no lock by a process killed inside one, and the temp files through which a lock or mutex is
 * written whose writer is provably gone (temp-writer.ts: named in this pid space, its pid dead). A
 * run killed with SIGKILL leaves its lock: harmless (the next claim takes it over at once) but, in a
 * location many runs use, they piled up forever; one killed while it wrote a lock or mutex (a
 * claim, a renewal, a takeover) left that write's temp file, forever too. A lock whose process may be
 * running — alive here, recorded in another pid space (a container sharing the volume, another boot)
 * or recording none (an older version, a system without /proc), or not whole — is never removed,
 * whether or not it ran out: its process may still release or renew it; nor is a temp file whose
 * writer may be running (a live pid here, another pid space, a name without this pid space's tag).
 * Each removal of a lock checks it again under its mutex, as a takeover does, so it cannot remove a
 * lock taken over meanwhile; a mutex held by another process is not waited for (that lock is left
 * to a later sweep). Throws only when `.leases` cannot be listed.
 */
export function removeLocksOfGoneProcesses(root: string): RemovedLockFiles {
  const directory = join(root, leaseDirectory);
  const removed: RemovedLockFiles = { locks: 0, tempFiles: 0 };
  let entries: Dirent[];
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return removed;
    throw error;
  }
  for (const entry of entries) {
    const lineageId = entry.name.endsWith(lockSuffix) ? entry.name.slice(0, -lockSuffix.length) : undefined;
    const temp = parseWholeFileTempName(entry.name);
    try {
      if (temp !== undefined && entry.isFile()) {
        if (!temp.target.endsWith(lockSuffix) && !temp.target.endsWith(mutexSuffix)) continue;
        const path = join(directory, entry.name);
        // Its writer renames or removes it within a few system calls: only a killed one leaves it.
        if (!writerIsGone(temp.pid, temp.digits, statSync(path).mtimeMs)) continue;
        unlinkIfPresent(path);
        removed.tempFiles += 1;
      } else if (lineageId !== undefined && entry.isFile() && isValidCheckpointId(lineageId)) {
        const path = join(directory, entry.name);
        if (!holderIsGone(path)) continue;
        withLockMutex(
          path,
          () => {
            if (!holderIsGone(path)) return;
            unlinkIfPresent(path);
            removed.locks += 1;
          },
          0,
        );
      } else if (entry.name.endsWith(mutexSuffix)) {
        // A mutex whose process was killed inside it after removing the lock (a release): entering
        // clears it when it is abandoned (lock-mutex.ts), and leaving removes the one entered.
        const path = join(directory, `${entry.name.slice(0, -mutexSuffix.length)}${lockSuffix}`);
        if (!existsSync(path)) withLockMutex(path, () => undefined, 0);
      }
    } catch {
      // Changed or removed meanwhile, or not readable: left as it is, as a claim would find it.
    }
  }
  return removed;
}

/** True when the lock at `path` exists and its process is provably gone. */
function holderIsGone(path: string): boolean {
  const lock = readLock(path);
  return lock !== undefined && processIsGone(lock);
}
