import { isSecretKey, redactionGeneration } from '@crewline/events';
import type { EntitySnapshot } from './document.js';
import { COMPARED_ARRAY_LENGTH, copyOwn, redactSecrets, redactString, redactWithMarks } from './redaction.js';
import type { SettledValues } from './settled-values.js';

/**
 * The redacted snapshot of each entity of one run as its last checkpoint stored it, given again
 * when the entity's new snapshot holds the same content. A flow of crews snapshots every crew of
 * the run on every checkpoint, and the crews that completed (and the flow itself while one of its
 * crews runs) come back the same each time: redaction then walks nothing, and a provider that
 * stores what changed meets the very same settled object again.
 *
 * Sound because a snapshot is the entity's own copy — nothing in it changes once `snapshotEntity`
 * returned (background writes store it later and depend on that too) — and still careful: an object
 * found in both snapshots that the run did not settle counts as changed, and so does a new
 * redaction generation (a secret registered since).
 */
export class UnchangedSnapshots {
  readonly #last = new WeakMap<
    object,
    { generation: number; raw: EntitySnapshot; redacted: EntitySnapshot }
  >();

  /** `raw` (the entity's new snapshot) redacted, or the last one given for `entity` when equal to it. */
  redacted(entity: object, raw: EntitySnapshot, settled: SettledValues): EntitySnapshot {
    const generation = redactionGeneration();
    const last = this.#last.get(entity);
    if (last === undefined || last.generation !== generation) {
      const redacted = redactSecrets(raw, settled);
      this.#last.set(entity, { generation, raw, redacted });
      return redacted;
    }
    // One walk both compares the new snapshot with the last one and redacts it, taking the redacted
    // form of each string the last one held at the same place: a running crew's snapshot differs
    // in one task, and comparing it first and redacting it all afterwards walked it twice.
    const walk: Walk = { generation, settled, changed: false };
    const redacted = redactLikeLast(last.raw, last.redacted, raw, false, walk) as EntitySnapshot;
    if (!walk.changed) {
      // Settled from its second use on: redaction and providers then skip it at once.
      last.redacted = settled.settle(last.redacted);
      return last.redacted;
    }
    this.#last.set(entity, { generation, raw, redacted });
    return redacted;
  }
}

/** What one walk of {@link redactLikeLast} shares: its rules, and whether it met a difference. */
interface Walk {
  readonly generation: number;
  readonly settled: SettledValues;
  /** Set at the first difference `sameContent` would find (it never goes back to false). */
  changed: boolean;
}

/**
 * `next` redacted (what `redactSecrets(next, settled)` gives), given `previous` and its redacted
 * form `previousRedacted` (the last snapshot's part at the same place), and `walk.changed` set
 * unless `next` holds what `previous` held by {@link sameContent}'s rules. A string equal to the
 * last one at its place takes its redacted form without being scanned; whatever differs, or may
 * have (an unsettled object found in both: it may have been changed in place), is redacted afresh.
 */
function redactLikeLast(
  previous: unknown,
  previousRedacted: unknown,
  next: unknown,
  underSecretKey: boolean,
  walk: Walk,
): unknown {
  if (typeof next === 'string') {
    // Same text at the same place (under the same names): the same redacted text.
    if (next === previous) return previousRedacted;
    walk.changed = true;
    return redactString(next, underSecretKey);
  }
  if (next === null || typeof next !== 'object') {
    if (next !== previous) walk.changed = true;
    return next;
  }
  const { generation, settled } = walk;
  if (!underSecretKey && settled.scannedUnder(next) === generation) {
    // Settled and clean under the current rules: redaction gives it back as it is.
    if (next !== previous && !walk.changed && !sameContent(previous, next, settled, generation))
      walk.changed = true;
    return next;
  }
  if (
    next === previous ||
    underSecretKey ||
    previous === null ||
    typeof previous !== 'object' ||
    Array.isArray(previous) !== Array.isArray(next)
  ) {
    if (!walk.changed && (next === previous || !sameContent(previous, next, settled, generation)))
      walk.changed = true;
    return redactWithMarks(next, underSecretKey, generation, settled);
  }
  if (Array.isArray(next))
    return redactArrayLikeLast(previous as unknown[], previousRedacted as unknown[], next, walk);
  if (!isPlainObject(previous) || !isPlainObject(next)) {
    walk.changed = true;
    return redactWithMarks(next, false, generation, settled);
  }
  const keys = Object.keys(next);
  const previousKeys = Object.keys(previous);
  let sameKeys = keys.length === previousKeys.length;
  for (let index = 0; index < keys.length && sameKeys; index += 1)
    sameKeys = keys[index] === previousKeys[index];
  if (!sameKeys) {
    walk.changed = true;
    return redactWithMarks(next, false, generation, settled);
  }
  let result: Record<string, unknown> | undefined;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index]!;
    const item = (next as Record<string, unknown>)[key];
    const previousItem = (previous as Record<string, unknown>)[key];
    let redactedItem: unknown;
    if (typeof item === 'string' && item === previousItem)
      redactedItem = (previousRedacted as Record<string, unknown>)[key];
    else if (item === null || (typeof item !== 'object' && typeof item !== 'string')) {
      if (item !== previousItem) walk.changed = true;
      continue;
    } else
      redactedItem = redactLikeLast(
        previousItem,
        (previousRedacted as Record<string, unknown>)[key],
        item,
        isSecretKey(key),
        walk,
      );
    if (redactedItem !== item) {
      result ??= copyOwn(next as Record<string, unknown>);
      // Defined, not assigned: a key named `__proto__` stays a key, as redaction keeps it.
      Object.defineProperty(result, key, {
        value: redactedItem,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return result ?? next;
}

/**
 * {@link redactLikeLast} for two arrays of one length. A long one (a crew's tasks) takes the
 * settled items redaction remembered at their positions (`settledItemsLike`) with one identity
 * comparison each, and remembers them again as redaction does.
 */
function redactArrayLikeLast(
  previous: readonly unknown[],
  previousRedacted: readonly unknown[],
  next: readonly unknown[],
  walk: Walk,
): unknown {
  const { generation, settled } = walk;
  if (previous.length !== next.length) {
    walk.changed = true;
    return redactWithMarks(next, false, generation, settled);
  }
  const compared = next.length >= COMPARED_ARRAY_LENGTH;
  const known = compared ? settled.settledItemsLike(next, generation) : undefined;
  let settledItems: unknown[] | undefined =
    compared && (known === undefined || known.length !== next.length) ? new Array(next.length) : undefined;
  let result: unknown[] | undefined;
  for (let index = 0; index < next.length; index += 1) {
    const item: unknown = next[index];
    let redactedItem: unknown;
    let settledItem: unknown;
    if (known !== undefined && item === known[index] && item !== undefined) {
      if (
        item !== previous[index] &&
        !walk.changed &&
        !sameContent(previous[index], item, settled, generation)
      )
        walk.changed = true;
      redactedItem = item;
      settledItem = item;
    } else {
      redactedItem = redactLikeLast(previous[index], previousRedacted[index], item, false, walk);
      if (
        compared &&
        redactedItem === item &&
        item !== null &&
        typeof item === 'object' &&
        settled.scannedUnder(item) === generation
      )
        settledItem = item;
    }
    if (compared && settledItems === undefined && settledItem !== known![index])
      settledItems = known!.slice(0, index);
    if (settledItems !== undefined) settledItems[index] = settledItem;
    if (redactedItem !== item && result === undefined) result = next.slice(0, index);
    if (result !== undefined) result.push(redactedItem);
  }
  if (compared) settled.rememberSettledItems(settledItems ?? known!, generation);
  return result ?? next;
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * True when `next` holds what `previous` held: the same primitives, the very same settled objects,
 * and arrays and plain objects (keys in the same order) of the same content. An unsettled object
 * found in both is taken as changed: it may have been changed in place.
 */
export function sameContent(
  previous: unknown,
  next: unknown,
  settled: SettledValues,
  generation = redactionGeneration(),
): boolean {
  if (previous === next) return typeof next !== 'object' || next === null || settled.has(next);
  if (typeof previous !== 'object' || typeof next !== 'object' || previous === null || next === null)
    return false;
  if (Array.isArray(previous)) {
    if (!Array.isArray(next) || previous.length !== next.length) return false;
    // The members that are not the very same object first: a running crew's task list differs in
    // one task, after all those it completed, and checking each of those settled (a lookup apiece)
    // before reaching it made every checkpoint cost more than the one before.
    for (let index = 0; index < next.length; index += 1)
      if (previous[index] !== next[index] && !sameContent(previous[index], next[index], settled, generation))
        return false;
    // The very same objects must be settled. A long list (a crew's tasks) was walked by redaction
    // before, which remembered its settled items at their positions: one identity comparison each
    // instead of a lookup each (fifty of them on each checkpoint of a crew-50 that did not change).
    const known =
      next.length >= COMPARED_ARRAY_LENGTH ? settled.settledItemsLike(next, generation) : undefined;
    for (let index = 0; index < next.length; index += 1) {
      const item: unknown = next[index];
      if (previous[index] !== item || (known !== undefined && known[index] === item && item !== undefined))
        continue;
      if (!sameContent(item, item, settled, generation)) return false;
    }
    return true;
  }
  if (Array.isArray(next) || !isPlainObject(previous) || !isPlainObject(next)) return false;
  const previousKeys = Object.keys(previous);
  const nextKeys = Object.keys(next);
  if (previousKeys.length !== nextKeys.length) return false;
  for (let index = 0; index < nextKeys.length; index += 1) {
    const key = nextKeys[index]!;
    if (previousKeys[index] !== key) return false;
    if (
      !sameContent(
        (previous as Record<string, unknown>)[key],
        (next as Record<string, unknown>)[key],
        settled,
      )
    )
      return false;
  }
  return true;
}
