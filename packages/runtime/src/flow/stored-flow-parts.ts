import type { EncodedValue, SettledValues } from '@crewline/runtime-state';
import { type Settle, settlerOf } from '../checkpointing/snapshot-values.js';
import type { StoredValues } from './run-progress.js';

/**
 * What a flow's checkpoints store that stays the same from one checkpoint to the next, kept between
 * snapshots so that a flow checkpointing on every event of its long crews does not encode, redact
 * and store its completed work again each time:
 *
 * - the encoded outputs of completed methods (and the inputs of due executions, which are outputs
 *   too), encoded once per value: a value met again (the same object, or an equal primitive) gets
 *   its stored form back. A method's output is stored as it was when first checkpointed after
 *   the method returned it;
 * - the committed state, encoded once per completed method (by the engine) and shared here with the
 *   state stored before it wherever it did not change, so that only what the method changed is new.
 *
 * Everything handed out is settled in the snapshot's run (see `SettledValues`): redacted once, and
 * reused by a provider that stores what changed without comparing it.
 */
export class StoredFlowParts {
  /** Stored forms of the values encoded by the last snapshot; what the next one may reuse. */
  #encoded = new Map<unknown, EncodedValue>();
  #next = new Map<unknown, EncodedValue>();
  #state: { committed: EncodedValue; stored: EncodedValue } | undefined;

  /**
   * Starts a snapshot for the run that owns `settled`: values the previous snapshot stored and
   * this one does not are let go. Returns what the snapshot stores its values through.
   */
  forSnapshot(
    settled: SettledValues | undefined,
  ): StoredValues & { state(committed: EncodedValue): EncodedValue } {
    this.#encoded = this.#next;
    this.#next = new Map();
    const settle = settlerOf(settled);
    return {
      value: (value, encode) => this.value(value, encode, settle),
      state: (committed) => this.state(committed, settle),
    };
  }

  /** `value` encoded (by `encode`) and settled, reusing the stored form of the same value. */
  value(value: unknown, encode: (value: unknown) => EncodedValue, settle: Settle): EncodedValue {
    let stored = this.#next.get(value) ?? this.#encoded.get(value);
    if (stored === undefined) stored = encode(value);
    stored = settle(stored);
    this.#next.set(value, stored);
    return stored;
  }

  /** The committed state as stored: shares every unchanged part with the state stored before. */
  state(committed: EncodedValue, settle: Settle): EncodedValue {
    if (this.#state?.committed !== committed) {
      const stored =
        this.#state === undefined
          ? committed
          : (shareUnchanged(committed, this.#state.stored) as EncodedValue);
      this.#state = { committed, stored };
    }
    const settled = settle(this.#state.stored);
    this.#state.stored = settled;
    return settled;
  }
}

/**
 * `next` with every subtree equal to the one at the same place in `previous` (same keys in the same
 * order, same values) replaced by that subtree of `previous`. Both are JSON values (an encoded state).
 */
export function shareUnchanged(next: unknown, previous: unknown): unknown {
  if (next === previous) return previous;
  if (typeof next !== 'object' || next === null || typeof previous !== 'object' || previous === null)
    return next;
  if (Array.isArray(next)) {
    if (!Array.isArray(previous)) return next;
    let same = next.length === previous.length;
    const result = new Array<unknown>(next.length);
    for (let index = 0; index < next.length; index += 1) {
      const shared = index < previous.length ? shareUnchanged(next[index], previous[index]) : next[index];
      if (shared !== previous[index]) same = false;
      result[index] = shared;
    }
    return same ? previous : result;
  }
  if (Array.isArray(previous)) return next;
  const keys = Object.keys(next);
  const previousKeys = Object.keys(previous);
  let same = keys.length === previousKeys.length;
  const result: Record<string, unknown> = {};
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index]!;
    const item = (next as Record<string, unknown>)[key];
    const shared = Object.hasOwn(previous, key)
      ? shareUnchanged(item, (previous as Record<string, unknown>)[key])
      : item;
    // Key order is part of the stored text: a key moved makes the object a new one.
    if (previousKeys[index] !== key || shared !== (previous as Record<string, unknown>)[key]) same = false;
    // defineProperty, never assignment: an (escaped) key must stay a plain own property.
    Object.defineProperty(result, key, {
      value: shared,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return same ? previous : result;
}
