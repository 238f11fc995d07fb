import { logger, REDACTED } from '@crewline/events';
import SuperJSON from 'superjson';
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

/** What {@link mapKeys} does with instances of classes: keep registered ones, report the others. */
interface ClassPolicy {
  isRegistered(valueClass: unknown): boolean;
  /** An instance of a class that is not registered is about to be stored as a plain object. */
  unregistered?(valueClass: unknown): void;
}

function mapKeys(
  value: unknown,
  rename: (key: string) => string,
  seen: Map<object, unknown>,
  classes: ClassPolicy,
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
    for (const item of value) result.push(mapKeys(item, rename, seen, classes, next));
    return result;
  }
  if (value instanceof Map) {
    const result = new Map();
    seen.set(value, result);
    for (const [key, item] of value)
      result.set(mapKeys(key, rename, seen, classes, next), mapKeys(item, rename, seen, classes, next));
    return result;
  }
  if (value instanceof Set) {
    const result = new Set();
    seen.set(value, result);
    for (const item of value) result.add(mapKeys(item, rename, seen, classes, next));
    return result;
  }
  let result: Record<string, unknown> = {};
  if (!isPlainObject(value)) {
    // Dates, RegExps, URLs, errors, typed arrays: superjson knows them.
    if (value instanceof Date || value instanceof RegExp || value instanceof URL || value instanceof Error)
      return value;
    if (ArrayBuffer.isView(value)) return value;
    // A registered class stays an instance of itself (superjson stores its name); any other class
    // instance is stored as its own enumerable fields.
    const prototype = Object.getPrototypeOf(value) as object;
    const valueClass = (prototype as { constructor?: unknown }).constructor;
    if (classes.isRegistered(valueClass)) result = Object.create(prototype) as Record<string, unknown>;
    else classes.unregistered?.(valueClass);
  }
  seen.set(value, result);
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'function' || typeof item === 'symbol') continue;
    defineOwn(result, rename(key), mapKeys(item, rename, seen, classes, next));
  }
  return result;
}

/** A class whose instances a codec stores and restores as instances of it. */
export type ValueClass = (abstract new (...args: any[]) => object) & { readonly name: string };

/**
 * A class to register: the class itself (stored under its `name`), or the class and the name to
 * store it under (for classes whose `name` is not unique or changes with minification).
 */
export type ValueClassEntry = ValueClass | { class: ValueClass; name: string };

export interface ValueCodecOptions {
  /**
   * Classes whose instances come back as instances (their prototype restored, the constructor not
   * called; fields are stored as they are, so they must be storable themselves). Default: none —
   * an instance of any other class comes back as a plain object, with a warning when it is stored.
   */
  classes?: readonly ValueClassEntry[];
}

/** Turns user values into storable form and back, knowing the classes it was given. */
export interface ValueCodec {
  /**
   * Encodes a user value for storage. Keys named `__proto__`, `constructor` or `prototype` are kept
   * (escaped), functions and symbols are dropped, cycles are preserved.
   */
  encode(value: unknown): EncodedValue;
  /**
   * Decodes what {@link ValueCodec.encode} produced. Never changes a prototype except to a
   * registered class's, whatever the input: an instance of a class this codec does not know comes
   * back as a plain object, with a warning once per class. Refuses a value nested more than
   * `MAX_NESTING_DEPTH` levels deep (references followed once each).
   */
  decode<T = unknown>(encoded: EncodedValue): T;
  /** The classes registered, by the name they are stored under. */
  readonly classes: ReadonlyMap<string, ValueClass>;
}

const codecComponent = 'value-codec';

function classEntry(entry: ValueClassEntry, index: number): { name: string; valueClass: ValueClass } {
  const valueClass = typeof entry === 'function' ? entry : entry?.class;
  const name = typeof entry === 'function' ? entry.name : entry?.name;
  if (typeof valueClass !== 'function') {
    throw stateError(
      'invalid_config',
      `classes[${index}] is not a class; pass the class itself (classes: [Money]) or { class: Money, name: 'Money' }`,
    );
  }
  if (typeof name !== 'string' || name.length === 0) {
    throw stateError(
      'invalid_config',
      `classes[${index}] has no name to store it under; pass { class: ..., name: '...' }`,
    );
  }
  return { name, valueClass };
}

/**
 * A codec with its own superjson instance (the process-wide one is never touched, so two projects
 * or two copies of this package never share registrations).
 */
export function createValueCodec(options: ValueCodecOptions = {}): ValueCodec {
  const serializer = new SuperJSON();
  const classes = new Map<string, ValueClass>();
  const registered = new Set<unknown>();
  for (const [index, entry] of (options.classes ?? []).entries()) {
    const { name, valueClass } = classEntry(entry, index);
    const existing = classes.get(name);
    if (existing === valueClass) continue;
    if (existing) {
      throw stateError(
        'invalid_config',
        `two classes are registered under the name "${name}"; give one another name with { class, name }`,
      );
    }
    classes.set(name, valueClass);
    registered.add(valueClass);
    serializer.registerClass(valueClass as never, { identifier: name });
  }
  const warned = new Set<unknown>();
  const warnedOnRead = new Set<string>();
  const encodePolicy: ClassPolicy = {
    isRegistered: (valueClass) => registered.has(valueClass),
    unregistered: (valueClass) => {
      if (warned.has(valueClass)) return;
      warned.add(valueClass);
      const name = typeof valueClass === 'function' && valueClass.name ? valueClass.name : '(anonymous)';
      logger.warn(
        codecComponent,
        `an instance of class ${name} is stored as a plain object and will be restored as one (no methods, not instanceof ${name}); register the class to keep it: defineConfig({ classes: [${name}] }) in crewline.config.ts`,
      );
    },
  };
  const decodePolicy: ClassPolicy = { isRegistered: (valueClass) => registered.has(valueClass) };

  return {
    classes,
    encode(value) {
      let mapped: unknown;
      try {
        mapped = mapKeys(value, escapeKey, new Map(), encodePolicy, MAX_VALUE_DEPTH);
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
        const { json, meta } = serializer.serialize(mapped);
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
    },
    decode<T = unknown>(encoded: EncodedValue): T {
      // A class this codec does not know comes back as a plain object, said once per class.
      const unknown = new Set<string>();
      const meta = withoutClasses(encoded.meta, classes, unknown);
      for (const name of unknown) {
        if (warnedOnRead.has(name)) continue;
        warnedOnRead.add(name);
        logger.warn(
          codecComponent,
          `a stored value is an instance of class ${name}, which is not registered here; it is restored as a plain object. Register it to restore instances: defineConfig({ classes: [${name}] }) in crewline.config.ts`,
        );
      }
      let decoded: unknown;
      try {
        decoded = serializer.deserialize(
          meta === undefined
            ? { json: encoded.json as never }
            : { json: encoded.json as never, meta: meta as never },
        );
      } catch (error) {
        throw stateError(
          'corrupt_checkpoint',
          'a stored value could not be decoded; the checkpoint is damaged',
          {
            cause: error,
          },
        );
      }
      try {
        // The stored text was nested at most MAX_NESTING_DEPTH levels, but superjson's references can
        // alias one stored object under another: a chain of them builds a value of any depth.
        return mapKeys(decoded, unescapeKey, new Map(), decodePolicy, MAX_NESTING_DEPTH) as T;
      } catch (error) {
        if (!(error instanceof TooDeepError)) throw error;
        throw stateError(
          'corrupt_checkpoint',
          `a stored value is nested more than ${MAX_NESTING_DEPTH} levels deep once its references are resolved; the checkpoint is damaged`,
          { details: { limit: MAX_NESTING_DEPTH } },
        );
      }
    },
  };
}

/**
 * superjson's `meta` with the annotations of classes `classes` lacks taken out (their names added to
 * `unknown`), so that those values decode as plain objects, and the annotations secret redaction
 * replaced: the tree mirrors the value's keys, so the type of a field named like a credential
 * (`token: undefined`, a Date under `password`) was redacted with it, and the checkpoint could not be
 * read back at all; its value decodes as stored (redacted, or absent). A node of its `values` tree is
 * `[annotation]`, `[annotation, children]` or a record of nodes; a class annotation is
 * `['class', name]`. Returns `meta` itself when nothing had to go.
 */
function withoutClasses(
  meta: JsonValue | undefined,
  classes: ReadonlyMap<string, ValueClass>,
  unknown: Set<string>,
): JsonValue | undefined {
  const values = (meta as { values?: JsonValue } | null | undefined)?.values;
  if (values === undefined || !mentionsUnknownClass(values, classes)) return meta;
  const strip = (node: JsonValue | undefined): JsonValue | undefined => {
    if (node === null || node === undefined || typeof node !== 'object') return node;
    if (!Array.isArray(node)) {
      const record: Record<string, JsonValue> = {};
      for (const [key, child] of Object.entries(node)) {
        const kept = strip(child);
        if (kept !== undefined) defineOwn(record, key, kept);
      }
      return record;
    }
    const [annotation, children] = node;
    const keptChildren = children === undefined ? undefined : strip(children);
    if (isRedacted(annotation)) return keptChildren;
    if (Array.isArray(annotation) && annotation[0] === 'class' && typeof annotation[1] === 'string') {
      if (!classes.has(annotation[1])) {
        unknown.add(annotation[1]);
        return keptChildren;
      }
    }
    return keptChildren === undefined ? [annotation as JsonValue] : [annotation as JsonValue, keptChildren];
  };
  return { ...(meta as Record<string, JsonValue>), values: strip(values) ?? {} };
}

/** An annotation (`'undefined'`, `['class', name]`...) that secret redaction replaced. */
function isRedacted(annotation: unknown): boolean {
  return annotation === REDACTED || (Array.isArray(annotation) && annotation.includes(REDACTED));
}

function mentionsUnknownClass(values: JsonValue, classes: ReadonlyMap<string, ValueClass>): boolean {
  const pending: unknown[] = [values];
  while (pending.length > 0) {
    const current = pending.pop();
    if (current === REDACTED) return true;
    if (!Array.isArray(current)) {
      if (current !== null && typeof current === 'object') pending.push(...Object.values(current));
      continue;
    }
    if (current[0] === 'class' && typeof current[1] === 'string') {
      if (!classes.has(current[1])) return true;
      continue;
    }
    pending.push(...current);
  }
  return false;
}

/** The codec with no classes registered: what {@link encodeValue} and {@link decodeValue} use by default. */
const plainCodec = createValueCodec();

/**
 * Encodes a user value for storage with `codec` (default: one with no classes registered). Keys named
 * `__proto__`, `constructor` or `prototype` are kept (escaped), functions and symbols are dropped,
 * cycles are preserved.
 */
export function encodeValue(value: unknown, codec: ValueCodec = plainCodec): EncodedValue {
  return codec.encode(value);
}

/**
 * Decodes what {@link encodeValue} produced, with `codec` (default: one with no classes
 * registered). Never changes a prototype except to a registered class's, whatever the input.
 */
export function decodeValue<T = unknown>(encoded: EncodedValue, codec: ValueCodec = plainCodec): T {
  return codec.decode<T>(encoded);
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
