import { isDeepStrictEqual } from 'node:util';
import type { Settle } from './snapshot-values.js';

/** A stored form as kept: the owner it is for, the values it was built from, and the form. */
export interface KeptStoredForm<Owner, Stored> {
  readonly owner: Owner;
  readonly values: readonly unknown[];
  readonly stored: Stored;
}

/** Options of {@link StoredForms}. */
export interface StoredFormsOptions<Owner, Context, Sources extends readonly unknown[], Stored> {
  /**
   * Every value the stored form is built from, read from the owner (and from its context: the crew
   * of a task), in the order `build` takes them. Each is compared by identity (`Object.is`): a
   * primitive, or an object that is replaced rather than changed; an object that may be changed in
   * place (call settings, kickoff inputs) is read through {@link byContent}.
   */
  sources: (owner: Owner, context: Context) => Sources;
  /**
   * Builds the stored form from the sources alone (never from the owner: nothing is left out of the
   * comparison). `settle` is for the parts of a form never kept (a task's conversation under way).
   */
  build: (sources: Sources, settle: Settle) => Stored;
  /**
   * Whether the owner's stored form may be kept at all (default: always). A task under way changes
   * in ways no cheap comparison sees (its conversation grows in place): it is built afresh each time.
   */
  keepable?: (owner: Owner) => boolean;
}

/** A source compared by content: see {@link byContent}. */
class ContentSource {
  constructor(readonly value: unknown) {}
}

/** A copy that compares equal to nothing: a value `structuredClone` cannot copy is read as changed. */
const uncomparable = Symbol('uncomparable');

/** Below this depth a kept copy is made by `structuredClone` (which also copies cycles). */
const SHARED_COPY_DEPTH = 16;

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A copy of `value` to compare the live value with later: plain objects and arrays copied, every
 * primitive shared. Why shared: strings are immutable, and a kept string that is the very string the
 * live value still holds compares by identity, where a cloned one is compared character by character
 * — kickoff inputs carrying a flow's earlier outputs made every checkpoint compare them all again,
 * a cost that grew with the run. Anything else (a class instance, a Map) is cloned, and a value
 * `structuredClone` cannot copy (a function inside) is read as changed every time.
 */
function copyOf(value: unknown, depth = 0, copies = new Map<object, unknown>()): unknown {
  if (value === null || typeof value !== 'object') return value;
  // A value reached twice (shared, or a cycle) is copied once, and the copy shares it the same way.
  if (copies.has(value)) return copies.get(value);
  if (depth < SHARED_COPY_DEPTH) {
    if (Array.isArray(value)) {
      const copy: unknown[] = [];
      copies.set(value, copy);
      for (const item of value) copy.push(copyOf(item, depth + 1, copies));
      return copy;
    }
    if (isPlainObject(value)) {
      const copy: Record<string, unknown> = Object.create(Object.getPrototypeOf(value));
      copies.set(value, copy);
      for (const key of Object.keys(value)) {
        const item = copyOf((value as Record<string, unknown>)[key], depth + 1, copies);
        // A key named __proto__ is data here: defined, never the copy's prototype.
        if (key === '__proto__')
          Object.defineProperty(copy, key, {
            value: item,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        else copy[key] = item;
      }
      return copy;
    }
  }
  let copy: unknown;
  try {
    copy = structuredClone(value);
  } catch {
    copy = uncomparable;
  }
  copies.set(value, copy);
  return copy;
}

/**
 * Marks a source that may be changed in place: a copy of it is kept and compared by content (as
 * `isDeepStrictEqual` does); `build` gets the value itself. A value `structuredClone` cannot copy (a
 * function inside) is read as changed every time.
 */
export function byContent<T>(value: T): T {
  // A primitive is compared as well by identity, and needs no mark.
  return (value !== null && typeof value === 'object' ? new ContentSource(value) : value) as T;
}

/**
 * From this depth on, content is compared by `isDeepStrictEqual` (which follows cycles too, but
 * compares a part reached by two paths twice: on a structure whose every level points twice at the
 * next, 2^depth comparisons). Deep enough for any value a run holds; the bound only keeps the
 * recursion off the end of the stack.
 */
const FAST_COMPARED_DEPTH = 1000;

/**
 * `isDeepStrictEqual` for a kept copy and a live value, faster on plain objects and arrays (kickoff
 * inputs, call settings, a task's context: a few flat fields compared on every snapshot). The pairs
 * already met (see below) are only tracked once a member is an object: comparing a flat list
 * allocates nothing.
 */
function sameContent(kept: unknown, value: unknown, depth: number, compared?: Map<object, object>): boolean {
  if (Object.is(kept, value)) return true;
  if (typeof kept !== 'object' || kept === null || typeof value !== 'object' || value === null) return false;
  // A pair met again (a shared part, or a cycle) is being or was compared already.
  if (compared?.get(kept) === value) return true;
  if (depth >= FAST_COMPARED_DEPTH) {
    // Met again by another path, it is not compared again (a parent's members made `compared`).
    compared?.set(kept, value);
    return isDeepStrictEqual(kept, value);
  }
  if (Array.isArray(kept)) {
    if (!Array.isArray(value) || value.length !== kept.length) return false;
    for (let index = 0; index < kept.length; index += 1) {
      const member = kept[index];
      if (Object.is(member, value[index])) continue;
      if (typeof member !== 'object' || member === null) return false;
      compared = tracked(compared, kept, value);
      if (!sameContent(member, value[index], depth + 1, compared)) return false;
    }
    return true;
  }
  if (Object.getPrototypeOf(kept) !== Object.prototype || Object.getPrototypeOf(value) !== Object.prototype)
    return isDeepStrictEqual(kept, value);
  const keys = Object.keys(kept);
  if (keys.length !== Object.keys(value).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(value, key)) return false;
    const member = (kept as Record<string, unknown>)[key];
    const now = (value as Record<string, unknown>)[key];
    if (Object.is(member, now)) continue;
    if (typeof member !== 'object' || member === null) return false;
    compared = tracked(compared, kept, value);
    if (!sameContent(member, now, depth + 1, compared)) return false;
  }
  return true;
}

/**
 * The pairs met so far, with `kept` and `value` among them, made on first use: created before the
 * first object member is compared, so that its siblings and their members share it.
 */
function tracked(
  compared: Map<object, object> | undefined,
  kept: object,
  value: object,
): Map<object, object> {
  const pairs = compared ?? new Map<object, object>();
  pairs.set(kept, value);
  return pairs;
}

function sameValues(kept: readonly unknown[], values: readonly unknown[]): boolean {
  if (kept.length !== values.length) return false;
  for (let index = 0; index < kept.length; index += 1) {
    const was = kept[index];
    const now = values[index];
    if (Object.is(was, now)) continue;
    if (!(was instanceof ContentSource && now instanceof ContentSource)) return false;
    if (!sameContent(was.value, now.value, 0)) return false;
  }
  return true;
}

function unmarked<Sources extends readonly unknown[]>(values: Sources): Sources {
  return values.map((value) => (value instanceof ContentSource ? value.value : value)) as unknown as Sources;
}

/**
 * Stored forms (the parts of a checkpoint built from a live object) kept per owner while every
 * value they were built from reads the same again.
 *
 * Why one helper: each snapshot cache used to pick by hand which fields of the live object it
 * compared, and each missed some (a task's reassigned agent, an agent's call settings or a crew's
 * kickoff inputs changed in place), so checkpoints kept storing the old value. Here the form is
 * built from what one `sources` function reads and from nothing else, and all of that is compared to
 * decide whether it still holds: a value the form starts to use is read there, compared with the
 * rest, and cannot be forgotten. The sources are a list, not named fields: reading them is most of
 * what a snapshot of a long settled task list costs.
 */
export class StoredForms<Owner extends object, Context, Sources extends readonly unknown[], Stored> {
  readonly #sources: (owner: Owner, context: Context) => Sources;
  readonly #build: (sources: Sources, settle: Settle) => Stored;
  readonly #keepable: ((owner: Owner) => boolean) | undefined;
  readonly #kept = new WeakMap<Owner, KeptStoredForm<Owner, Stored>>();

  constructor(options: StoredFormsOptions<Owner, Context, Sources, Stored>) {
    this.#sources = options.sources;
    this.#build = options.build;
    this.#keepable = options.keepable;
  }

  /** The owner's stored form: the kept one while it holds, else built afresh (and kept when it may be). */
  stored(owner: Owner, context: Context, settle: Settle): Stored {
    const kept = this.kept(owner, context, settle);
    return kept === undefined ? this.built(owner, context, settle) : kept.stored;
  }

  /** The owner's stored form built now, and not kept. */
  built(owner: Owner, context: Context, settle: Settle): Stored {
    return this.#build(unmarked(this.#sources(owner, context)), settle);
  }

  /**
   * The owner's kept stored form, built (and kept) when the last one no longer holds; `undefined`
   * when the owner's form may not be kept. A caller that keeps it asks {@link holds} next time.
   */
  kept(owner: Owner, context: Context, settle: Settle): KeptStoredForm<Owner, Stored> | undefined {
    if (this.#keepable !== undefined && !this.#keepable(owner)) return undefined;
    const values = this.#sources(owner, context);
    const known = this.#kept.get(owner);
    if (known !== undefined && sameValues(known.values, values)) return known;
    const kept: KeptStoredForm<Owner, Stored> = {
      owner,
      values: values.map((value) =>
        value instanceof ContentSource ? new ContentSource(copyOf(value.value)) : value,
      ),
      stored: this.#build(unmarked(values), settle),
    };
    this.#kept.set(owner, kept);
    return kept;
  }

  /** True while `kept` is still the owner's stored form: the owner may be kept and its sources read the same. */
  holds(kept: KeptStoredForm<Owner, Stored> | undefined, owner: Owner, context: Context): boolean {
    return (
      kept !== undefined &&
      kept.owner === owner &&
      (this.#keepable === undefined || this.#keepable(owner)) &&
      sameValues(kept.values, this.#sources(owner, context))
    );
  }
}
