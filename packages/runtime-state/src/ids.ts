import { randomBytes, randomUUID } from 'node:crypto';

let lastMillis = 0;
let lastSuffix = 0;
let lastStamp = '';

// Within one millisecond the 8 hex digits after the time count up: the first id of a millisecond
// starts at a random number below 2^31, each next one adds 1 plus up to 2^16 - 1 at random. Ids of
// one process made in the same millisecond sort in creation order without moving the time part, and
// ids of two processes still differ by their randomness. Only past ~65,000 ids in one millisecond
// (an average step of 2^15 fills the 2^31 left) does the time part borrow the next one.
const firstSuffixRange = 0x80000000;
const stepRange = 0x10000;
const maxSuffix = 0xffffffff;

function randomBelow(range: number): number {
  return randomBytes(4).readUInt32BE(0) % range;
}

function stampOf(millis: number): string {
  const iso = new Date(millis).toISOString(); // 2026-11-21T09:30:00.123Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}${iso.slice(20, 23)}`;
}

/**
 * A checkpoint id whose text order is its creation order: `20261121T093000123-3f9a2b1c`
 * (UTC time to the millisecond, then 8 hex digits). Within one process ids only grow: a second id in
 * the same millisecond (or after the clock stepped back) keeps the time part and gets larger hex
 * digits, so the time part stays the time the id was made instead of running ahead of the clock.
 */
export function newCheckpointId(now = Date.now()): string {
  let millis = now;
  let suffix: number;
  if (millis > lastMillis) {
    suffix = randomBelow(firstSuffixRange);
  } else {
    millis = lastMillis;
    suffix = lastSuffix + 1 + randomBelow(stepRange);
    if (suffix > maxSuffix) {
      millis = lastMillis + 1;
      suffix = randomBelow(firstSuffixRange);
    }
  }
  if (millis !== lastMillis || lastStamp === '') lastStamp = stampOf(millis);
  lastMillis = millis;
  lastSuffix = suffix;
  return `${lastStamp}-${suffix.toString(16).padStart(8, '0')}`;
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
