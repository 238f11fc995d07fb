import { createHash, randomBytes } from 'node:crypto';
import { processIsGone, thisProcess } from '@crewline/runtime-state/internal';

// Whose temp file is this, and is its writer gone? A spare (spare-files.ts) stays open for as long
// as its writer runs, and a checkpoint's temp file (`.<id>.<pid>.<8 hex>.tmp`) lives only while it is
// written, so their age says nothing certain; the pid in the name does, but only where that pid means
// a process of this pid space: a container sharing the volume has pids of its own, and another
// machine or boot too. Names cannot grow (older versions and tools recognize temp files by their
// shape), so the first 5 of the 8 hex digits tell where the writer ran: a hash of its host, pid
// namespace and boot, where the system tells them (Linux). A temp file with this process's tag whose
// pid is dead, or is this process's pid but older than this process (a killed predecessor with the
// same pid, as in a container that restarts its program), is provably left over. One from elsewhere,
// or named where the system does not tell, is never proven so (see temp-sweep.ts). Two places share
// a tag about once in a million: that is the residual risk.

const tagDigits = 5;
let tag: string | null | undefined;

/** This process's pid space tag (5 hex digits), or undefined where its pid namespace and boot are unknown. */
function pidSpaceTag(): string | undefined {
  if (tag === undefined) {
    const here = thisProcess();
    tag =
      here.pidNamespace === undefined || here.bootId === undefined
        ? null
        : createHash('sha256')
            .update(`${here.host}\0${here.pidNamespace}\0${here.bootId}`)
            .digest('hex')
            .slice(0, tagDigits);
  }
  return tag ?? undefined;
}

/** Spares named so far by this process: the tail of a tagged name (see {@link writerNameDigits}). */
let spareCount = randomBytes(2).readUInt16BE(0);

/**
 * The 8 hex digits of a new spare's or temp file's name: this process's pid space tag, then 3 digits
 * counting the names it made (from a random start). Counted, not random: 3 random digits (4,096 names) let two
 * of the 8 spares kept for a directory draw one name about once in 40 groups, and the second's
 * exclusive create failed (a spare short; a test of the bound flaked). Checkpoint temp files, and
 * those of lock writes (whole-file.ts), draw from the same counter (their names hold their id or
 * lock besides, so never a spare's name), so a spare kept long can see its name drawn again after
 * 4,096 more names: that create fails (EEXIST) and the group has one spare fewer, nothing worse.
 */
export function writerNameDigits(): string {
  const here = pidSpaceTag();
  if (here === undefined) return randomBytes(4).toString('hex');
  spareCount = (spareCount + 1) % 16 ** (8 - tagDigits);
  return `${here}${spareCount.toString(16).padStart(8 - tagDigits, '0')}`;
}

/**
 * A spare this old before this process started cannot be its own, even with file systems that store
 * coarse times or a clock adjusted since.
 */
const beforeStartMarginMs = 10_000;

/**
 * True only when the writer of a spare (`pid` and `digits` from its name, `modifiedAtMs` its file's
 * time: when it was created, or filled) is provably gone: named in this pid space, and its pid is not
 * alive (nor a zombie), or is this process's while the file predates this process. A pid reused by
 * another process since reads as alive: that spare is kept until a later sweep finds the pid free.
 */
export function writerIsGone(pid: number, digits: string, modifiedAtMs: number): boolean {
  const here = pidSpaceTag();
  if (here === undefined || !digits.startsWith(here)) return false;
  if (pid === process.pid) return modifiedAtMs < performance.timeOrigin - beforeStartMarginMs;
  return processIsGone({ ...thisProcess(), pid });
}
