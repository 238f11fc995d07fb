import { statSync, unlinkSync } from 'node:fs';
import { stat, unlink } from 'node:fs/promises';
import { basename } from 'node:path';
import { CrewlineError, logger } from '@crewline/events';
import { component, describeError } from '../errors.js';
import { parseSpareFileName, parseTempFileName } from '../file-names.js';
import { removeLocksOfGoneProcesses } from '../leases/lineage-lock.js';
import { walkLocation, walkLocationSync } from '../read/directory-walk.js';
import { writerIsGone } from './temp-writer.js';

/** A temp file younger than this is never removed, whoever wrote it. */
export const STALE_TEMP_FILE_AGE_MS = 60_000;

/** Locations already swept by this process (the sweep runs once per location per process). */
const swept = new Set<string>();

/** True when a process with this pid exists (or exists but belongs to another user). */
export function isProcessAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * An empty spare temp file younger than this is never removed either, unless its writer is provably
 * gone (temp-writer.ts): its writer's pid may live in another pid namespace (containers sharing a
 * volume), where it looks dead from here while it keeps the spare open to fill it. Empty, it is
 * harmless until then.
 */
export const STALE_SPARE_FILE_AGE_MS = 24 * 60 * 60 * 1000;

function isStale(path: string, stats: { mtimeMs: number; size: number }, pid: number, now: number): boolean {
  const name = basename(path);
  const temp = parseTempFileName(name);
  // A temp file whose writer is provably gone (its pid space, its pid dead: see temp-writer.ts) goes
  // at once, whatever its age: a run killed with SIGKILL left up to 8 spares and up to 6 files of the
  // group it was writing, and the process that resumes it in the same directory would otherwise have
  // kept the spares for a day and the others for a minute. Names made by older versions, or where
  // the system does not tell the pid space, prove nothing and wait for the rules below.
  if (temp !== undefined && writerIsGone(temp.pid, temp.digits, stats.mtimeMs)) return true;
  const spare = parseSpareFileName(name);
  const age = now - stats.mtimeMs;
  if (stats.size === 0 && spare !== undefined && age <= STALE_SPARE_FILE_AGE_MS) return false;
  return age > STALE_TEMP_FILE_AGE_MS && !isProcessAlive(pid);
}

/**
 * A sweep that failed. The location itself that cannot be listed (no read permission, say) is only
 * noted at debug level: the read or write the sweep runs before lists it too and fails with the same
 * error, which would otherwise be printed twice — once as this warning, once as the error.
 */
function sweepFailed(root: string, error: unknown): void {
  if (CrewlineError.hasCode(error, 'read_failed') && (error as CrewlineError).details?.directory === root) {
    logger.debug(component, `could not sweep temp files in ${root}: ${describeError(error)}`);
    return;
  }
  logger.warn(component, `could not sweep temp files in ${root}`, error);
}

function report(root: string, removed: number): void {
  if (removed > 0)
    logger.info(component, `removed ${removed} temp file(s) left by killed writers in ${root}`);
}

/**
 * Removes the lineage locks of processes provably gone and the temp files of lock writes they were
 * killed in (lineage-lock.ts); best-effort like the rest.
 */
function sweepLocks(root: string): void {
  try {
    const removed = removeLocksOfGoneProcesses(root);
    if (removed.locks > 0)
      logger.info(component, `removed ${removed.locks} lock file(s) left by killed runs in ${root}`);
    if (removed.tempFiles > 0)
      logger.info(component, `removed ${removed.tempFiles} lock temp file(s) left by killed runs in ${root}`);
  } catch (error) {
    logger.debug(component, `could not sweep lock files in ${root}: ${describeError(error)}`);
  }
}

/**
 * Removes temp files left by writers that died mid-write (older than a minute and whose pid is not
 * alive), the temp files and spares of writers provably gone, and the lineage locks of processes
 * provably gone and the temp files of lock writes such a process was killed in (`.leases`), the first
 * time this process uses `root`. A live writer's temp file and
 * a live process's lock are never touched.
 * Best-effort: a failure is logged, never thrown.
 */
export function sweepTempFilesOnceSync(root: string): void {
  if (swept.has(root)) return;
  swept.add(root);
  try {
    const now = Date.now();
    let removed = 0;
    for (const temp of walkLocationSync(root).tempFiles) {
      try {
        if (isStale(temp.path, statSync(temp.path), temp.pid, now)) {
          unlinkSync(temp.path);
          removed += 1;
        }
      } catch {
        // Renamed or removed meanwhile by its writer: nothing to clean.
      }
    }
    report(root, removed);
  } catch (error) {
    sweepFailed(root, error);
  }
  sweepLocks(root);
}

/** Async {@link sweepTempFilesOnceSync}. */
export async function sweepTempFilesOnce(root: string): Promise<void> {
  if (swept.has(root)) return;
  swept.add(root);
  try {
    const now = Date.now();
    let removed = 0;
    for (const temp of (await walkLocation(root)).tempFiles) {
      try {
        if (isStale(temp.path, await stat(temp.path), temp.pid, now)) {
          await unlink(temp.path);
          removed += 1;
        }
      } catch {
        // Renamed or removed meanwhile by its writer: nothing to clean.
      }
    }
    report(root, removed);
  } catch (error) {
    sweepFailed(root, error);
  }
  sweepLocks(root);
}

/** Forgets which locations were swept, so the next use sweeps again (tests, long-lived processes). */
export function resetTempFileSweeps(): void {
  swept.clear();
}
