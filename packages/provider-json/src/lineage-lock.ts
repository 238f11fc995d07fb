import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isValidCheckpointId, type Lease, type LeaseRequest, type LeaseToken } from '@crewline/runtime-state';
import { notTheHead } from '@crewline/runtime-state/internal';
import { component, errorCode, jsonError } from './errors.js';

/**
 * Lock files for runs that continue a lineage in a JSON location: `<location>/.leases/<lineage>.lock`
 * holds who continues it (owner token, holder, host, pid) and until when. It appears whole: written to
 * a temp file, then hard-linked to its name (which fails when the name exists), so of two processes
 * that continue the same checkpoint at once exactly one gets it, and nobody ever reads a lock that is
 * still being written (a reader that took an empty lock for a damaged one took it over while its
 * creator went on believing it held it: both paid for the next task). A lock is stale when its
 * process is gone (same host, pid not alive) or its time ran out; a stale lock is taken over under a
 * short-lived mutex directory, so two takers cannot both win.
 *
 * Files cannot fence across machines (a network file system gives no such guarantee), so the JSON
 * provider declares `leases: false`: this keeps a second process on the same machine from paying for
 * a run that is already running, no more.
 */
const leaseDirectory = '.leases';
/** A takeover mutex older than this belongs to a process that died while holding it. */
const abandonedMutexMs = 10_000;
/**
 * A lock file that does not parse is held this long after it was last written: on a file system
 * without hard links it is created empty and written after (its creator is writing it right now);
 * older, it was left by a process killed while creating it.
 */
const damagedLockGraceMs = 10_000;

interface LockContent {
  owner: string;
  holder: string;
  host: string;
  pid: number;
  expiresAt: number;
}

function lockPath(root: string, lineageId: string): string {
  if (!isValidCheckpointId(lineageId))
    throw jsonError('invalid_name', `lineage id ${JSON.stringify(lineageId)} is not allowed`);
  return join(root, leaseDirectory, `${lineageId}.lock`);
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
      typeof parsed.expiresAt === 'number'
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

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return errorCode(error) === 'EPERM';
  }
}

function isStale(lock: LockContent, now: number): boolean {
  if (lock.expiresAt <= now) return true;
  return lock.host === hostname() && lock.pid !== process.pid && !processIsAlive(lock.pid);
}

function leaseOf(lineageId: string, lock: LockContent): Lease {
  return {
    lineageId,
    owner: lock.owner,
    holder: lock.holder,
    expiresAt: new Date(lock.expiresAt).toISOString(),
  };
}

function heldError(lineageId: string, lock: LockContent, now: number) {
  const seconds = Math.max(0, Math.ceil((lock.expiresAt - now) / 1000));
  return jsonError(
    'conflict',
    `run ${lineageId} is being continued by ${lock.holder} (lease ends in ${seconds} s unless renewed); wait for it to finish, or fork the checkpoint to continue on a new branch`,
    { details: { lineageId, holder: lock.holder, expiresInMs: Math.max(0, lock.expiresAt - now) } },
  );
}

/** Creates the lock file, whole, only if none exists; false when one does. */
function createExclusive(path: string, content: LockContent): boolean {
  const temp = tempPath(path);
  writeNew(temp, content);
  try {
    linkSync(temp, path);
    return true;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'EEXIST') return false;
    // No hard links on this file system: created empty, then written (readers wait for it, see
    // damagedLockGraceMs).
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error;
    return createThenWrite(path, content);
  } finally {
    unlinkIfPresent(temp);
  }
}

function tempPath(path: string): string {
  return `${path}.${process.pid}.${Math.random().toString(16).slice(2)}.tmp`;
}

function unlinkIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

function writeNew(path: string, content: LockContent): void {
  if (!createThenWrite(path, content))
    throw jsonError('write_failed', `temp lock file ${path} exists already`);
}

/** O_EXCL create, then write: false when the file exists. */
function createThenWrite(path: string, content: LockContent): boolean {
  let descriptor: number;
  try {
    descriptor = openSync(path, 'wx', 0o600);
  } catch (error) {
    if (errorCode(error) === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(descriptor, JSON.stringify(content));
  } finally {
    closeSync(descriptor);
  }
  return true;
}

/** Replaces a lock's content atomically (a temp file renamed over it). */
function replace(path: string, content: LockContent): void {
  const temp = tempPath(path);
  writeNew(temp, content);
  renameSync(temp, path);
}

/**
 * Runs `action` holding the takeover mutex of one lock, or returns false when another process holds
 * it (it is taking the lock over right now).
 */
function withTakeoverMutex(path: string, action: () => void): boolean {
  const mutex = `${path}.takeover`;
  try {
    mkdirSync(mutex);
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error;
    try {
      if (Date.now() - statSync(mutex).mtimeMs < abandonedMutexMs) return false;
      rmdirSync(mutex);
      mkdirSync(mutex);
    } catch {
      return false;
    }
  }
  try {
    action();
  } finally {
    rmdirSync(mutex);
  }
  return true;
}

/** Claims a lineage for one continuation (see the module comment). `headId` is the lineage's newest. */
export function claimLineageLock(root: string, request: LeaseRequest, headId: string | null): Lease {
  const { lineageId } = request;
  const path = lockPath(root, lineageId);
  // Someone else's live lock is reported before a moved head, as SQLite and Postgres do: the run is
  // being continued right now, so a second continuer is refused, not sent to pay for it on a branch.
  const held = readLock(path);
  if (held !== undefined && held.owner !== request.owner && !isStale(held, Date.now()))
    throw heldError(lineageId, held, Date.now());
  if (request.checkpointId !== headId) throw notTheHead(component, lineageId, request.checkpointId, headId);
  mkdirSync(join(root, leaseDirectory), { recursive: true });
  const content: LockContent = {
    owner: request.owner,
    holder: request.holder,
    host: hostname(),
    pid: process.pid,
    expiresAt: Date.now() + request.ttlMs,
  };
  if (createExclusive(path, content)) return leaseOf(lineageId, content);
  const now = Date.now();
  const existing = readLock(path);
  if (existing === undefined) {
    if (createExclusive(path, content)) return leaseOf(lineageId, content);
  } else if (existing.owner === request.owner) {
    replace(path, content);
    return leaseOf(lineageId, content);
  } else if (!isStale(existing, now)) {
    throw heldError(lineageId, existing, now);
  }
  let taken = false;
  const tookOver = withTakeoverMutex(path, () => {
    // Inside the mutex the lock cannot change hands except by its holder renewing or releasing it.
    const current = readLock(path);
    if (current !== undefined && !isStale(current, Date.now())) return;
    replace(path, content);
    taken = true;
  });
  if (tookOver && taken) return leaseOf(lineageId, content);
  const holder = readLock(path);
  throw holder === undefined
    ? jsonError('conflict', `run ${lineageId} is being taken over by another process; try again`, {
        details: { lineageId },
      })
    : heldError(lineageId, holder, Date.now());
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
  assertHoldsLineageLock(root, token);
  const path = lockPath(root, token.lineageId);
  const current = readLock(path)!;
  const content = { ...current, expiresAt: Date.now() + ttlMs };
  replace(path, content);
  return leaseOf(token.lineageId, content);
}

/** Removes the lock if `token` holds it. */
export function releaseLineageLock(root: string, token: LeaseToken): void {
  const path = lockPath(root, token.lineageId);
  const lock = readLock(path);
  if (lock === undefined || lock.owner !== token.owner) return;
  unlinkIfPresent(path);
}
