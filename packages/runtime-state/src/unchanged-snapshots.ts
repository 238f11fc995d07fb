import { redactionGeneration } from '@crewline/events';
import type { EntitySnapshot } from './document.js';
import { COMPARED_ARRAY_LENGTH, redactSecrets } from './redaction.js';
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
    if (
      last !== undefined &&
      last.generation === generation &&
      sameContent(last.raw, raw, settled, generation)
    ) {
      // Settled from its second use on: the redaction below and providers then skip it at once.
      last.redacted = settled.settle(last.redacted);
      return last.redacted;
    }
    const redacted = redactSecrets(raw, settled);
    this.#last.set(entity, { generation, raw, redacted });
    return redacted;
  }
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
