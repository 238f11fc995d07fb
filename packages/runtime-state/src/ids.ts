import { randomBytes, randomUUID } from 'node:crypto';

let lastMillis = 0;

/**
 * A checkpoint id whose text order is its creation order: `20261121T093000123-3f9a2b1c`
 * (UTC time to the millisecond, then 8 random hex digits). Within one process the clock part never
 * goes backwards, so two ids made in the same millisecond still sort in creation order.
 */
export function newCheckpointId(now = Date.now()): string {
  const millis = Math.max(now, lastMillis + 1);
  lastMillis = millis;
  const iso = new Date(millis).toISOString(); // 2026-11-21T09:30:00.123Z
  const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}${iso.slice(20, 23)}`;
  return `${stamp}-${randomBytes(4).toString('hex')}`;
}

export function newLineageId(): string {
  return randomUUID();
}

/** A branch name for a fork when the user gives none: `fork/<short checkpoint id>-<6 hex>`. */
export function newForkBranchName(fromCheckpointId: string | null): string {
  const suffix = randomBytes(3).toString('hex');
  return fromCheckpointId
    ? `fork/${fromCheckpointId.slice(-8)}-${suffix}`
    : `fork/${randomBytes(4).toString('hex')}`;
}

const idPattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const branchSegmentPattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

/** Checkpoint ids are safe as file names: letters, digits, `_ . -`, no `..`. */
export function isValidCheckpointId(id: string): boolean {
  return idPattern.test(id) && !id.includes('..');
}

/**
 * Branch names are `/`-separated segments of letters, digits and `_ . -`; no segment is `.` or `..`
 * or starts with a dot, so a branch can never name a path outside the checkpoint location.
 */
export function isValidBranchName(branch: string): boolean {
  if (branch.length === 0 || branch.length > 200) return false;
  return branch.split('/').every((segment) => branchSegmentPattern.test(segment) && !segment.includes('..'));
}
