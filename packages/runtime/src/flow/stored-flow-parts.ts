import type { EncodedValue, SettledValues } from '@crewline/runtime-state';
import { type Settle, settlerOf } from '../checkpointing/snapshot-values.js';
import type { FlowExecution, StoredValues } from './run-progress.js';

/** A value as a snapshot stored it, and the completion that returned it (its method's count). */
interface StoredReturn {
  value: unknown;
  completion: number;
  stored: EncodedValue;
}

/**
 * What a flow's checkpoints store that stays the same from one checkpoint to the next, kept between
 * snapshots so that a flow checkpointing on every event of its long crews does not encode, redact
 * and store its completed work again each time:
 *
 * - the encoded outputs of completed methods (and the inputs of due executions, which are outputs
 *   too), encoded once per completion: a method's output as the first snapshot after the completion
 *   that returned it stored it, a due execution's input as the first snapshot after it became due
 *   stored it. Not once per object: a method may return the same object again, changed in place (a
 *   list in its state it grows on each pass of a loop), and what a resume hands on must be the
 *   value as that completion returned it, not as an earlier one did;
 * - the committed state, encoded once per completed method (by the engine) and shared here with the
 *   state stored before it wherever it did not change, so that only what the method changed is new.
 *
 * Everything handed out is settled in the snapshot's run (see `SettledValues`): redacted once, and
 * reused by a provider that stores what changed without comparing it.
 */
export class StoredFlowParts {
  /** The execution the kept forms are of: a new one (a new kickoff, a restore) starts afresh. */
  #execution: FlowExecution | undefined;
  /** Per method, its latest output as stored. */
  #outputs = new Map<string, StoredReturn>();
  #lastOutput: (StoredReturn & { method: string }) | undefined;
  /** Per due execution (by id), its input as stored; those the last snapshot did not store are let go. */
  #inputs = new Map<number, StoredReturn>();
  #nextInputs = new Map<number, StoredReturn>();
  /** Values encoded by the current snapshot: a value met again in it is stored once. */
  #encoded = new Map<unknown, EncodedValue>();
  #state: { committed: EncodedValue; stored: EncodedValue } | undefined;

  /**
   * Starts a snapshot of `execution` for the run that owns `settled`. Returns what the snapshot
   * stores its values through.
   */
  forSnapshot(
    execution: FlowExecution,
    settled: SettledValues | undefined,
  ): StoredValues & { state(committed: EncodedValue): EncodedValue } {
    if (execution !== this.#execution) {
      this.#execution = execution;
      this.#outputs.clear();
      this.#lastOutput = undefined;
      this.#nextInputs.clear();
    }
    this.#inputs = this.#nextInputs;
    this.#nextInputs = new Map();
    this.#encoded.clear();
    const settle = settlerOf(settled);
    return {
      output: (method, value, encode) => {
        const completion = execution.callCounts.get(method) ?? 0;
        const kept = this.#outputs.get(method);
        const stored = this.#store(kept, value, completion, encode, settle);
        if (stored !== kept) this.#outputs.set(method, stored);
        return stored.stored;
      },
      lastOutput: (method, value, encode) => {
        const completion = execution.callCounts.get(method) ?? 0;
        const kept = this.#lastOutput?.method === method ? this.#lastOutput : undefined;
        const stored = this.#store(kept, value, completion, encode, settle);
        if (stored !== kept) this.#lastOutput = { ...stored, method };
        return stored.stored;
      },
      input: (activation, value, encode) => {
        const stored = this.#store(this.#inputs.get(activation), value, 0, encode, settle);
        this.#nextInputs.set(activation, stored);
        return stored.stored;
      },
      state: (committed) => this.state(committed, settle),
    };
  }

  /**
   * `value`, returned by `completion`, as stored: `kept` when it is that value from that completion,
   * else encoded (once per snapshot) and settled.
   */
  #store(
    kept: StoredReturn | undefined,
    value: unknown,
    completion: number,
    encode: (value: unknown) => EncodedValue,
    settle: Settle,
  ): StoredReturn {
    if (kept !== undefined && kept.completion === completion && Object.is(kept.value, value)) {
      kept.stored = settle(kept.stored);
      return kept;
    }
    let stored = this.#encoded.get(value);
    if (stored === undefined) {
      stored = settle(encode(value));
      this.#encoded.set(value, stored);
    }
    return { value, completion, stored };
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
