import { decodeValue, type EncodedValue, encodeValue, type ValueCodec } from '@crewline/runtime-state';
import { composeState, type FlowState, type StateSchema } from './flow-state.js';
import type { FlowOptions } from './flow-types.js';
import type { Activation } from './run-progress.js';
import { StateFieldUse } from './state-field-use.js';

/**
 * The state a flow's methods share: made from the initial state (class, then options) or from a
 * saved one, and turned into the state of record a checkpoint stores, without what executions that
 * have not completed changed (see {@link StateFieldUse}).
 */
export class SharedState<State extends object> {
  /** The flow instance: its `initialState` field or method, its class's `stateSchema`. */
  readonly #flow: { readonly flowName: string };
  readonly #initialState: FlowOptions<State>['initialState'];
  readonly #fieldUse: StateFieldUse;
  #state: FlowState<State> | undefined;

  constructor(flow: { readonly flowName: string }, initialState: FlowOptions<State>['initialState']) {
    this.#flow = flow;
    this.#initialState = initialState;
    this.#fieldUse = new StateFieldUse(flow);
  }

  /** The state if it was made already (read or set before kickoff, or by an earlier kickoff). */
  get existing(): FlowState<State> | undefined {
    return this.#state;
  }

  /** An `id` written into `initialState` (class or options), if any. */
  declaredId(): string | undefined {
    for (const source of [this.#initialState, this.#classInitialState()]) {
      const id = (source as { id?: unknown } | undefined)?.id;
      if (typeof id === 'string' && id.length > 0) return id;
    }
    return undefined;
  }

  setId(id: string): void {
    if (this.#state) defineId(this.#state, id);
  }

  /** A new state: the initial state with `layers` over it (later wins). */
  compose(id: string, layers: unknown[]): FlowState<State> {
    this.#state = this.#build(id, [...this.#initialLayers(), ...layers]);
    return this.#state;
  }

  /**
   * A saved state, laid over the initial state but for the fields a method had deleted (`deleted`,
   * see {@link ofRecord}): those stay deleted, and a field added to the initial state since the save
   * comes with its initial value (a method of the new code may use it).
   */
  restore(id: string, saved: EncodedValue, codec: ValueCodec, deleted: readonly string[]): FlowState<State> {
    const gone = new Set(deleted);
    const initial = this.#initialLayers().map((layer) => withoutFields(layer, gone));
    this.#state = this.#build(id, [...initial, decodeValue(saved, codec)]);
    return this.#state;
  }

  /**
   * The state of record, encoded: the live `state` at the start of a run; after `completed`
   * completed, the live state but for the fields only `unfinished` executions used, which keep their
   * value in `committed` (the state of record until now). A resume then runs those executions against
   * the state as it was before they started, as it does a method that ran alone.
   */
  ofRecord(
    state: FlowState<State>,
    completed: Activation | undefined,
    unfinished: readonly Activation[],
    committed: EncodedValue | undefined,
    codec: ValueCodec,
  ): { state: EncodedValue; deleted: string[] } {
    const live = state as Record<string, unknown>;
    const heldBack = completed ? this.#fieldUse.heldBack(completed, unfinished) : new Set<string>();
    if (heldBack.size === 0 || !committed)
      return { state: encodeValue(live, codec), deleted: this.#deletedFrom(live) };
    const saved = decodeValue<Record<string, unknown>>(committed, codec);
    const record: Record<string, unknown> = {};
    // In the live state's order, so that what did not change is stored as before.
    for (const key of [...Object.keys(live), ...Object.keys(saved)]) {
      if (Object.hasOwn(record, key)) continue;
      const source = heldBack.has(key) ? saved : live;
      if (!Object.hasOwn(source, key)) continue;
      Object.defineProperty(record, key, {
        value: source[key],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return { state: encodeValue(record, codec), deleted: this.#deletedFrom(record) };
  }

  /** The fields of the initial state (class, then options) that `record` does not have. */
  #deletedFrom(record: Record<string, unknown>): string[] {
    const deleted: string[] = [];
    for (const key of this.#initialKeys) if (!Object.hasOwn(record, key)) deleted.push(key);
    return deleted;
  }

  /** A run starts: what executions of an earlier one used no longer counts (it was rolled back). */
  forgetExecutions(): void {
    this.#fieldUse.clear();
  }

  /**
   * The fields of the initial state as the state was last made from it. Kept rather than read again
   * at each completion: an `initialState()` method may be costly, or count its calls.
   */
  #initialKeys: readonly string[] = [];

  /** The initial state's layers (class, then options), read now; their fields noted (see {@link #initialKeys}). */
  #initialLayers(): unknown[] {
    const layers = [this.#classInitialState(), this.#initialState];
    const keys = new Set<string>();
    for (const layer of layers) {
      if (!isPlainObject(layer)) continue;
      for (const key of Object.keys(layer)) if (key !== 'id') keys.add(key);
    }
    this.#initialKeys = [...keys];
    return layers;
  }

  #classInitialState(): unknown {
    const declared = (this.#flow as { initialState?: unknown }).initialState;
    return typeof declared === 'function' ? (declared as () => unknown).call(this.#flow) : declared;
  }

  #build(id: string, layers: unknown[]): FlowState<State> {
    const flowClass = this.#flow.constructor as { readonly stateSchema?: StateSchema };
    const state = composeState<State>(this.#flow.flowName, flowClass.stateSchema, id, layers);
    defineId(state, id);
    this.#fieldUse.watch(state);
    return state;
  }
}

/**
 * Whether two states of record hold equal values, whatever order their keys are in (arrays keep
 * theirs): a state restored is laid over the initial state, whose key order wins, and an input object
 * may list its keys in any order. Compared as plain JSON, the same values in another order counted as
 * a change, and a finished flow kicked off again with the inputs it held wrote its end again.
 * Compared in place and left at the first difference: no text of either is built (a 1 MB state,
 * 100,000 keys; see {@link sameEncodedValue}).
 */
export function sameStateRecord(one: EncodedValue | undefined, other: EncodedValue | undefined): boolean {
  return sameEncodedValue(one ?? null, other ?? null);
}

/**
 * Deep equality of two encoded values (JSON data) as their stored text reads them, key order aside:
 * a field whose value is `undefined` counts as absent, as `JSON.stringify` leaves it out. Only own
 * fields are read (a key named `__proto__` is a field like any other).
 */
function sameEncodedValue(one: unknown, other: unknown): boolean {
  if (one === other) return true;
  if (typeof one !== 'object' || typeof other !== 'object' || one === null || other === null) {
    // The one value not equal to itself; JSON data holds none, the guard keeps the comparison total.
    return Number.isNaN(one) && Number.isNaN(other);
  }
  const isArray = Array.isArray(one);
  if (isArray !== Array.isArray(other)) return false;
  if (isArray) {
    const items = other as unknown[];
    if (one.length !== items.length) return false;
    for (let index = 0; index < one.length; index += 1) {
      if (!sameEncodedValue(one[index], items[index])) return false;
    }
    return true;
  }
  const fields = one as Record<string, unknown>;
  const otherFields = other as Record<string, unknown>;
  let count = 0;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (value === undefined) continue;
    count += 1;
    if (!Object.hasOwn(otherFields, key) || !sameEncodedValue(value, otherFields[key])) return false;
  }
  // Every field of `one` is in `other` with its value: equal when `other` has no more, or when those
  // it has beside them are undefined.
  const otherKeys = Object.keys(otherFields);
  if (otherKeys.length === count) return true;
  let otherCount = 0;
  for (const key of otherKeys) if (otherFields[key] !== undefined) otherCount += 1;
  return count === otherCount;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** `layer` without the fields in `gone` (a copy; `layer` itself when it has none of them). */
function withoutFields(layer: unknown, gone: ReadonlySet<string>): unknown {
  if (gone.size === 0 || !isPlainObject(layer)) return layer;
  if (!Object.keys(layer).some((key) => gone.has(key))) return layer;
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(layer)) {
    if (gone.has(key)) continue;
    Object.defineProperty(kept, key, {
      value: layer[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return kept;
}

function defineId(state: object, id: string): void {
  Object.defineProperty(state, 'id', { value: id, enumerable: true, writable: false, configurable: true });
}
