import { isSecretKey, REDACTED, redactionGeneration, redactSecretsInText } from '@crewline/events';

/**
 * Whether a string under a credential-like key is replaced: any but the empty string and the word
 * `undefined`, which is no secret and is what an encoded value's annotation says of a field set to
 * `undefined` (`meta` mirrors the value's keys): replaced, `token: undefined` came back `null`.
 */
function redactsUnderSecretKey(text: string): boolean {
  return text.length > 0 && text !== 'undefined';
}

/**
 * Returns a copy of a JSON-safe value in which every string under a credential-named key
 * (`apiKey`, `secretAccessKey`, `authorization`, `password`, ...) is replaced by `[REDACTED]`, and
 * every other string is scrubbed of credentials (`redactSecretsInText`: registered values, known key
 * shapes, `api_key=…` assignments). The input is not modified; unchanged subtrees are shared.
 * Subtrees a run settled (see `SettledValues`) and that were scanned under the current rules are
 * passed through without scanning them again.
 */
export function redactSecrets<T>(value: T, settled?: RedactionMarks): T {
  if (settled === undefined) return redactUnmarked(value, false) as T;
  return redact(value, false, redactionGeneration(), settled) as T;
}

/**
 * {@link redact} without marks to read or record: what a run's events take (each redacted once, as it
 * is recorded), and values redacted outside a run. A third of the size of `redact`, so that V8
 * optimizes it after fewer calls (a run of a few hundred events spends much of its redaction before
 * `redact` is optimized), and it skips the checks of marks at every object.
 */
function redactUnmarked(value: unknown, underSecretKey: boolean): unknown {
  if (typeof value === 'string') {
    if (underSecretKey) return redactsUnderSecretKey(value) ? REDACTED : value;
    return redactSecretsInText(value);
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let result: unknown[] | undefined;
    for (let index = 0; index < value.length; index += 1) {
      const item: unknown = value[index];
      const next = isUnchangedPrimitive(item) ? item : redactUnmarked(item, underSecretKey);
      if (next !== item && result === undefined) result = value.slice(0, index);
      if (result !== undefined) result.push(next);
    }
    return result ?? value;
  }
  let result: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (isUnchangedPrimitive(item)) continue;
    const next = redactUnmarked(item, underSecretKey || isSecretKey(key));
    if (next !== item) {
      result ??= copyOwn(value as Record<string, unknown>);
      Object.defineProperty(result, key, {
        value: next,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return result ?? value;
}

/**
 * What redaction reads and records about subtrees already redacted that their owner promises never
 * to change again: the redaction generation each was last scanned under. A run checkpointing on
 * every event snapshots the same completed work hundreds of times; scanning it once is enough,
 * until a secret registered since then asks for one more scan. One run owns them (`SettledValues`):
 * nothing is marked process-wide.
 */
export interface RedactionMarks {
  /** The generation `value` was last scanned under, when it is settled. */
  scannedUnder(value: object): number | undefined;
  /** `value`, settled, was scanned again under `generation` and found clean. */
  rescanned(value: object, generation: number): void;
  /**
   * Items of an earlier long array (one with the same first item) that were settled and scanned
   * under `generation`, at their positions (`undefined` elsewhere); see {@link rememberSettledItems}.
   * Optional: without it every item is looked up on its own.
   */
  settledItemsLike?(array: readonly unknown[], generation: number): readonly unknown[] | undefined;
  /** Remembers which items of a long array (at their positions) were settled under `generation`. */
  rememberSettledItems?(items: readonly unknown[], generation: number): void;
}

/**
 * Arrays this long are compared item by item with an earlier one of the run (see
 * `RedactionMarks.settledItemsLike`): a crew's list of tasks comes back in every snapshot, new each
 * time but holding the same settled task objects, and one identity comparison per item is several
 * times cheaper than asking the marks about each (at 500 tasks, that lookup was most of what
 * redaction cost a checkpoint).
 */
export const COMPARED_ARRAY_LENGTH = 16;

/**
 * Redacts `value` under the current rules with `marks`, and records every object of the result as
 * scanned under `generation` (`marks.rescanned`): settling a tree settles each of its subtrees, so a
 * later tree that shares one of them (a flow state that grew by one entry) is scanned only where
 * it is new.
 */
export function redactAndSettle(value: unknown, generation: number, marks: RedactionMarks): unknown {
  return redact(value, false, generation, marks, true);
}

/**
 * {@link redact} for callers that walk part of a tree themselves (see unchanged-snapshots.ts):
 * `value` redacted under `generation` with `marks`, as met under a credential name or not.
 */
export function redactWithMarks(
  value: unknown,
  underSecretKey: boolean,
  generation: number,
  marks: RedactionMarks,
): unknown {
  return redact(value, underSecretKey, generation, marks);
}

function redact(
  value: unknown,
  underSecretKey: boolean,
  generation: number,
  marks: RedactionMarks | undefined,
  settling = false,
): unknown {
  // The generation a marked subtree was last scanned under (undefined when not marked).
  const marked =
    marks !== undefined && !underSecretKey && value !== null && typeof value === 'object'
      ? marks.scannedUnder(value)
      : undefined;
  if (marked === generation) return value;
  if (typeof value === 'string') {
    if (underSecretKey && redactsUnderSecretKey(value)) return REDACTED;
    return redactSecretsInText(value);
  }
  if (Array.isArray(value)) {
    // Settling too: an unchanged snapshot settled whole (see UnchangedSnapshots) holds the crew's
    // task list, whose settled items are then recognized by position rather than looked up.
    const compared =
      marks?.settledItemsLike !== undefined && !underSecretKey && value.length >= COMPARED_ARRAY_LENGTH;
    const known = compared ? marks.settledItemsLike!(value, generation) : undefined;
    // The settled items at their positions, for the next array like this one: `known` itself while
    // they are the same (a running crew's list, snapshot after snapshot), a copy from the first
    // position that differs.
    let settledItems: unknown[] | undefined =
      compared && (known === undefined || known.length !== value.length)
        ? new Array(value.length)
        : undefined;
    // Copied only from the first item that changes: most arrays come back unchanged.
    let result: unknown[] | undefined;
    for (let index = 0; index < value.length; index += 1) {
      const item: unknown = value[index];
      let next: unknown;
      let settledItem: unknown;
      if (isUnchangedPrimitive(item)) next = item;
      else if (known !== undefined && item === known[index] && item !== undefined) {
        // The very object an earlier array held settled: scanned under this generation, unchanged.
        next = item;
        settledItem = item;
      } else {
        next = redact(item, underSecretKey, generation, marks, settling);
        if (
          compared &&
          next === item &&
          item !== null &&
          typeof item === 'object' &&
          marks!.scannedUnder(item) === generation
        )
          settledItem = item;
      }
      if (compared && settledItems === undefined && settledItem !== known![index])
        settledItems = known!.slice(0, index);
      if (settledItems !== undefined) settledItems[index] = settledItem;
      if (next !== item && result === undefined) result = value.slice(0, index);
      if (result !== undefined) result.push(next);
    }
    if (compared) marks!.rememberSettledItems?.(settledItems ?? known!, generation);
    if (settling) marks!.rescanned(result ?? value, generation);
    else if (result === undefined && marked !== undefined) marks!.rescanned(value, generation);
    return result ?? value;
  }
  if (value !== null && typeof value === 'object') {
    let result: Record<string, unknown> | undefined;
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      // Numbers, booleans and null come out as they went in, under any name: the name is not looked up.
      if (isUnchangedPrimitive(item)) continue;
      // Strings, most of what a snapshot holds, without a call: no marks to read for them.
      const next =
        typeof item === 'string'
          ? redactString(item, underSecretKey || isSecretKey(key))
          : redact(item, underSecretKey || isSecretKey(key), generation, marks, settling);
      if (next !== item) {
        result ??= copyOwn(value as Record<string, unknown>);
        Object.defineProperty(result, key, {
          value: next,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
    // A marked subtree scanned again under a newer generation and found clean: once is enough.
    if (settling) marks!.rescanned(result ?? value, generation);
    else if (result === undefined && marked !== undefined) marks!.rescanned(value, generation);
    return result ?? value;
  }
  return value;
}

/** A string under a credential name (`underSecretKey`) is replaced whole; any other is scrubbed. */
export function redactString(text: string, underSecretKey: boolean): string {
  if (underSecretKey) return redactsUnderSecretKey(text) ? REDACTED : text;
  return redactSecretsInText(text);
}

/** A value redaction gives back as it is: anything but a string or an object. */
function isUnchangedPrimitive(value: unknown): boolean {
  return typeof value !== 'string' && (typeof value !== 'object' || value === null);
}

export function copyOwn(source: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    Object.defineProperty(copy, key, {
      value: source[key],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}
