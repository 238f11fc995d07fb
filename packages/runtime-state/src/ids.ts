import { randomBytes, randomFillSync, randomUUID } from 'node:crypto';

let lastMillis = 0;
let lastSuffix = 0;
let lastStamp = '';
/** The id {@link newCheckpointId} returned last. */
let lastId = '';

// Within one millisecond the 8 hex digits after the time count up: the first id of a millisecond
// starts at a random number below 2^31, each next one adds 1 plus up to 2^16 - 1 at random. Ids of
// one process made in the same millisecond sort in creation order without moving the time part, and
// ids of two processes still differ by their randomness. Only past ~65,000 ids in one millisecond
// (an average step of 2^15 fills the 2^31 left) does the time part borrow the next one.
const firstSuffixRange = 0x80000000;
const stepRange = 0x10000;
const maxSuffix = 0xffffffff;

// Random words for ids are drawn from a pool filled 1,024 at a time: a run checkpointing on every
// event makes an id per event, and a call into the random generator for each 4 bytes cost more than
// the rest of making the id.
const poolWords = 1024;
const pool = new Uint32Array(poolWords);
let poolNext = poolWords;

function randomBelow(range: number): number {
  if (poolNext === poolWords) {
    randomFillSync(pool);
    poolNext = 0;
  }
  const word = pool[poolNext]!;
  // Used once: a word handed out never stays in memory for a later id to repeat.
  pool[poolNext] = 0;
  poolNext += 1;
  return word % range;
}

function stampOf(millis: number): string {
  const iso = new Date(millis).toISOString(); // 2026-11-21T09:30:00.123Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}${iso.slice(20, 23)}`;
}

const idParts = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})-([0-9a-f]{8})$/;

/**
 * Raises this process's last id to `id` (a parent's) when that sorts later, so the next id sorts
 * after it. A run continued on another machine whose clock is behind the parent writer's would
 * otherwise make a child that sorts before its parent; every provider takes a lineage's newest id as
 * its head, so the parent would stay the head and a second process be granted it again.
 */
function raiseFloorTo(id: string): void {
  const parts = idParts.exec(id);
  if (parts === null) return;
  const [, year, month, day, hour, minute, second, milli, hex] = parts;
  const millis = Date.UTC(
    Number(year),
    Number(month) - 1,
    Number(day),
    Number(hour),
    Number(minute),
    Number(second),
    Number(milli),
  );
  const suffix = Number.parseInt(hex!, 16);
  if (!Number.isFinite(millis) || stampOf(millis) !== id.slice(0, 18)) return;
  if (millis < lastMillis || (millis === lastMillis && suffix <= lastSuffix)) return;
  lastMillis = millis;
  lastSuffix = suffix;
  lastStamp = id.slice(0, 18);
}

/**
 * A checkpoint id whose text order is its creation order: `20261121T093000123-3f9a2b1c`
 * (UTC time to the millisecond, then 8 hex digits). Within one process ids only grow: a second id in
 * the same millisecond (or after the clock stepped back) keeps the time part and gets larger hex
 * digits, so the time part stays the time the id was made instead of running ahead of the clock.
 * Given `after` (the parent's id), the id sorts after it too, whatever the clocks of the machines
 * that made them.
 */
export function newCheckpointId(now = Date.now(), after?: string | null): string {
  // The parent is most often the id this process made last, which the floor holds already.
  if (after && after !== lastId) raiseFloorTo(after);
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
  lastId = `${lastStamp}-${suffix.toString(16).padStart(8, '0')}`;
  return lastId;
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

/** How to write a branch name, for the refusals of one that {@link isValidBranchName} rejects. */
export const branchNameRule = 'use segments of letters, digits, "_", "." and "-" separated by "/"';

/**
 * Branch names are `/`-separated segments of letters, digits and `_ . -`; no segment is `.` or `..`
 * or starts with a dot, so a branch can never name a path outside the checkpoint location.
 */
export function isValidBranchName(branch: string): boolean {
  if (branch.length === 0 || branch.length > 200) return false;
  return branch.split('/').every((segment) => branchSegmentPattern.test(segment) && !segment.includes('..'));
}
