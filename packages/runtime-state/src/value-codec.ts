import superjson from 'superjson';
import { stateError } from './errors.js';
import type { JsonValue } from './json.js';
import { MAX_NESTING_DEPTH } from './nesting-depth.js';

/**
 * A user value (flow state, kickoff inputs, task outputs) in storable form: superjson's `json` and
 * `meta`, so that Dates, Maps, Sets, BigInts, `undefined` and friends survive a round trip.
 */
export interface EncodedValue {
  json: JsonValue;
  meta?: JsonValue;
}

// Keys that superjson refuses or that would touch a prototype on read. They are stored with a `~`
// prefix (and a key that already looks escaped gets one more), so encoding is lossless.
const dangerousKey = /^~*(?:__proto__|constructor|prototype)$/;

function escapeKey(key: string): string {
  return dangerousKey.test(key) ? `~${key}` : key;
}

function unescapeKey(key: string): string {
  return key.startsWith('~') && dangerousKey.test(key) ? key.slice(1) : key;
}

function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * How deeply a value of the run (state, inputs, outputs) may nest when it is encoded: the read limit
 * less the levels a document itself takes to reach a value (entities, tasks, `json`, ...), so that
 * whatever is written can be read back.
 */
export const MAX_VALUE_DEPTH = MAX_NESTING_DEPTH - 32;

/** Thrown by {@link mapKeys} past its `levelsLeft`; the codec turns it into a typed refusal. */
class TooDeepError extends Error {}

function mapKeys(
  value: unknown,
  rename: (key: string) => string,
  seen: Map<object, unknown>,
  levelsLeft = Number.POSITIVE_INFINITY,
): unknown {
  if (value === null || typeof value !== 'object') return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  if (levelsLeft <= 0) throw new TooDeepError();
  const next = levelsLeft - 1;
  if (Array.isArray(value)) {
    const result: unknown[] = [];
    seen.set(value, result);
    for (const item of value) result.push(mapKeys(item, rename, seen, next));
    return result;
  }
  if (value instanceof Map) {
    const result = new Map();
    seen.set(value, result);
    for (const [key, item] of value)
      result.set(mapKeys(key, rename, seen, next), mapKeys(item, rename, seen, next));
    return result;
  }
  if (value instanceof Set) {
    const result = new Set();
    seen.set(value, result);
    for (const item of value) result.add(mapKeys(item, rename, seen, next));
    return result;
  }
  if (!isPlainObject(value)) {
    // Dates, RegExps, URLs, errors, typed arrays: superjson knows them; class instances are stored
    // as their own enumerable fields.
    if (value instanceof Date || value instanceof RegExp || value instanceof URL || value instanceof Error)
      return value;
    if (ArrayBuffer.isView(value)) return value;
  }
  const result: Record<string, unknown> = {};
  seen.set(value, result);
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'function' || typeof item === 'symbol') continue;
    defineOwn(result, rename(key), mapKeys(item, rename, seen, next));
  }
  return result;
}

/**
 * Encodes a user value for storage. Keys named `__proto__`, `constructor` or `prototype` are kept
 * (escaped), functions and symbols are dropped, cycles are preserved.
 */
export function encodeValue(value: unknown): EncodedValue {
  let mapped: unknown;
  try {
    mapped = mapKeys(value, escapeKey, new Map(), MAX_VALUE_DEPTH);
  } catch (error) {
    if (!(error instanceof TooDeepError)) throw error;
    // Refused here rather than written: a checkpoint nested past MAX_NESTING_DEPTH is refused on read.
    throw stateError(
      'too_large',
      `a value is nested more than ${MAX_VALUE_DEPTH} levels deep and could not be restored from a checkpoint; flatten it (or store it as a string)`,
      { details: { limit: MAX_VALUE_DEPTH } },
    );
  }
  try {
    const { json, meta } = superjson.serialize(mapped);
    return meta === undefined
      ? { json: json as JsonValue }
      : { json: json as JsonValue, meta: meta as JsonValue };
  } catch (error) {
    throw stateError(
      'invalid_state',
      'a value could not be encoded for a checkpoint; keep state to plain data',
      {
        cause: error,
      },
    );
  }
}

/**
 * Decodes what {@link encodeValue} produced. Never changes a prototype, whatever the input; refuses a
 * value nested more than `MAX_NESTING_DEPTH` levels deep (references followed once each).
 */
export function decodeValue<T = unknown>(encoded: EncodedValue): T {
  let decoded: unknown;
  try {
    decoded = superjson.deserialize(
      encoded.meta === undefined
        ? { json: encoded.json as never }
        : { json: encoded.json as never, meta: encoded.meta as never },
    );
  } catch (error) {
    throw stateError('corrupt_checkpoint', 'a stored value could not be decoded; the checkpoint is damaged', {
      cause: error,
    });
  }
  try {
    // The stored text was nested at most MAX_NESTING_DEPTH levels, but superjson's references can
    // alias one stored object under another: a chain of them builds a value of any depth.
    return mapKeys(decoded, unescapeKey, new Map(), MAX_NESTING_DEPTH) as T;
  } catch (error) {
    if (!(error instanceof TooDeepError)) throw error;
    throw stateError(
      'corrupt_checkpoint',
      `a stored value is nested more than ${MAX_NESTING_DEPTH} levels deep once its references are resolved; the checkpoint is damaged`,
      { details: { limit: MAX_NESTING_DEPTH } },
    );
  }
}

/**
 * Converts any value into plain JSON for the event history and summaries: Dates become ISO strings,
 * BigInts strings, Maps objects, Sets arrays, errors `{ name, message }`; functions, symbols and
 * `undefined` are dropped; cycles become `"[Circular]"`; dangerous keys are escaped as in
 * {@link encodeValue}. Lossy by design; use {@link encodeValue} for values that must round-trip.
 */
export function toJsonSafe(value: unknown, ancestors: object[] = []): JsonValue | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'bigint':
      return value.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return null;
  const object = value as object;
  if (ancestors.includes(object)) return '[Circular]';
  if (object instanceof Date) return Number.isNaN(object.getTime()) ? null : object.toISOString();
  if (object instanceof Error) return { name: object.name, message: object.message };
  if (object instanceof RegExp || object instanceof URL) return String(object);
  if (typeof (object as { toJSON?: unknown }).toJSON === 'function' && !(object instanceof Map)) {
    return toJsonSafe((object as { toJSON(): unknown }).toJSON(), [...ancestors, object]) ?? null;
  }
  const nextAncestors = [...ancestors, object];
  if (Array.isArray(object) || object instanceof Set) {
    const items: JsonValue[] = [];
    for (const item of object) {
      const safe = toJsonSafe(item, nextAncestors);
      items.push(safe === undefined ? null : safe);
    }
    return items;
  }
  const result: Record<string, JsonValue> = {};
  const entries: Iterable<[unknown, unknown]> =
    object instanceof Map ? object.entries() : Object.entries(object as Record<string, unknown>);
  for (const [key, item] of entries) {
    const safe = toJsonSafe(item, nextAncestors);
    if (safe !== undefined) defineOwn(result, escapeKey(String(key)), safe);
  }
  return result;
}
