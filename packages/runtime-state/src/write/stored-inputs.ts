import { redactionGeneration } from '@crewline/events';
import { registerInputSecrets } from '../input-secrets.js';
import { redactSecrets } from '../redaction.js';
import type { SettledValues } from '../settled-values.js';
import { type EncodedValue, encodeValue, type ValueCodec } from '../value-codec.js';

/**
 * Plain JSON values nested deeper than this are encoded afresh on every checkpoint rather than
 * copied and compared: kickoff inputs are a few flat fields, and the copy must not cost more than
 * the encoding it saves.
 */
const MAX_COMPARED_DEPTH = 32;

/**
 * The run's kickoff inputs as its checkpoints store them (encoded, redacted), kept between
 * checkpoints: a run checkpointing on every event stores the same inputs hundreds of times, and
 * encoding them (superjson walks and annotates the whole value) was a fixed cost of every checkpoint.
 *
 * `RuntimeState.inputs` is public and may be changed in place, so reuse is decided by content: the
 * inputs are compared with a copy taken when they were last encoded. Only plain JSON is compared
 * (strings, finite numbers, booleans, null, plain objects and arrays, each object met once): anything
 * superjson annotates (a Date, a Map, `undefined`, `-0`, a shared reference) is encoded every time.
 */
export class StoredInputs {
  #last:
    | {
        copy: unknown;
        codec: ValueCodec | undefined;
        generation: number;
        stored: EncodedValue;
      }
    | undefined;

  /**
   * `inputs` encoded with `codec` and redacted: the same object as last time while the inputs hold
   * the same plain JSON and no secret was registered since, settled (see {@link SettledValues}) so
   * that redaction and providers skip it at once.
   */
  stored(inputs: unknown, codec: ValueCodec | undefined, settled: SettledValues): EncodedValue {
    const last = this.#last;
    if (
      last !== undefined &&
      last.codec === codec &&
      last.generation === redactionGeneration() &&
      samePlainJson(inputs, last.copy, new Set(), 0)
    )
      return last.stored;
    // Inputs changed in place during the run (`state.inputs.apiKey = …`): a new value under a
    // credential name is redacted by value from here on, this checkpoint included (see
    // registerInputSecrets). Registering it moves the generation on, so the generation is read after.
    registerInputSecrets(inputs);
    const generation = redactionGeneration();
    const encoded = encodeValue(inputs, codec);
    const copy = plainJsonCopy(inputs, new Set(), 0);
    if (copy === notPlain) {
      // Encoded afresh next time too: redacted without settling (nothing would find it again).
      this.#last = undefined;
      return redactSecrets(encoded);
    }
    const stored = settled.settle(encoded);
    this.#last = { copy, codec, generation, stored };
    return stored;
  }
}

const notPlain = Symbol('not plain JSON');

function isPlainPrimitive(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    default:
      return value === null;
  }
}

function isPlainRecord(value: object): boolean {
  return Object.getPrototypeOf(value) === Object.prototype;
}

/** A deep copy of `value` when it is plain JSON (see {@link StoredInputs}), else {@link notPlain}. */
function plainJsonCopy(value: unknown, seen: Set<object>, depth: number): unknown {
  if (isPlainPrimitive(value)) return value;
  if (typeof value !== 'object' || value === null || depth >= MAX_COMPARED_DEPTH || seen.has(value))
    return notPlain;
  seen.add(value);
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    for (let index = 0; index < value.length; index += 1) {
      const item = plainJsonCopy(value[index], seen, depth + 1);
      if (item === notPlain) return notPlain;
      copy.push(item);
    }
    return copy;
  }
  if (!isPlainRecord(value)) return notPlain;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = plainJsonCopy((value as Record<string, unknown>)[key], seen, depth + 1);
    if (item === notPlain) return notPlain;
    Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/**
 * True when `value` is plain JSON equal to `copy` (a result of {@link plainJsonCopy}): the same
 * primitives, the same keys in the same order, and no object met twice.
 */
function samePlainJson(value: unknown, copy: unknown, seen: Set<object>, depth: number): boolean {
  if (typeof copy !== 'object' || copy === null) return value === copy && isPlainPrimitive(value);
  if (typeof value !== 'object' || value === null || depth >= MAX_COMPARED_DEPTH || seen.has(value))
    return false;
  seen.add(value);
  if (Array.isArray(copy)) {
    if (!Array.isArray(value) || value.length !== copy.length) return false;
    for (let index = 0; index < copy.length; index += 1)
      if (!samePlainJson(value[index], copy[index], seen, depth + 1)) return false;
    return true;
  }
  if (Array.isArray(value) || !isPlainRecord(value)) return false;
  const keys = Object.keys(value);
  const copyKeys = Object.keys(copy);
  if (keys.length !== copyKeys.length) return false;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index]!;
    if (key !== copyKeys[index]) return false;
    if (
      !samePlainJson(
        (value as Record<string, unknown>)[key],
        (copy as Record<string, unknown>)[key],
        seen,
        depth + 1,
      )
    )
      return false;
  }
  return true;
}
