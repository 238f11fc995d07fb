import { isSecretKey, REDACTED, redactionGeneration, redactSecretsInText } from '@crewline/events';

/**
 * Returns a copy of a JSON-safe value in which every string under a credential-named key
 * (`apiKey`, `secretAccessKey`, `authorization`, `password`, ...) is replaced by `[REDACTED]`, and
 * every other string is scrubbed of credentials (`redactSecretsInText`: registered values, known key
 * shapes, `api_key=…` assignments). The input is not modified; unchanged subtrees are shared.
 */
export function redactSecrets<T>(value: T): T {
  return redact(value, false, redactionGeneration()) as T;
}

// Subtrees already redacted that their owner promises never to change again (a completed task's
// stored form, for instance), with the redaction generation they were scanned under. A run
// checkpointing on every event snapshots the same completed work hundreds of times; scanning it once
// is enough, until a secret registered since then asks for one more scan.
const redactedTrees = new WeakMap<object, number>();

/**
 * Redacts `value` once and remembers the result: later {@link redactSecrets} calls return that
 * subtree as is instead of scanning it again (unless it sits under a credential-named key). Only for
 * values that are never mutated afterwards.
 */
export function markRedacted<T>(value: T): T {
  const generation = redactionGeneration();
  const redacted = redact(value, false, generation) as T;
  if (redacted !== null && typeof redacted === 'object') redactedTrees.set(redacted as object, generation);
  return redacted;
}

/**
 * True when `value` is a subtree returned by {@link markRedacted}: already redacted, and promised by
 * its owner never to change again. A provider that stores what changed may then take the very same
 * object, met again, as unchanged without comparing it member by member.
 */
export function isMarkedRedacted(value: unknown): boolean {
  return value !== null && typeof value === 'object' && redactedTrees.has(value);
}

function redact(value: unknown, underSecretKey: boolean, generation: number): unknown {
  // The generation a marked subtree was last scanned under (undefined when not marked).
  const marked =
    !underSecretKey && value !== null && typeof value === 'object' ? redactedTrees.get(value) : undefined;
  if (marked === generation) return value;
  if (typeof value === 'string') {
    if (underSecretKey && value.length > 0) return REDACTED;
    return redactSecretsInText(value);
  }
  if (Array.isArray(value)) {
    // Copied only from the first item that changes: most arrays come back unchanged.
    let result: unknown[] | undefined;
    for (let index = 0; index < value.length; index += 1) {
      const item: unknown = value[index];
      const next = redact(item, underSecretKey, generation);
      if (next !== item && result === undefined) result = value.slice(0, index);
      if (result !== undefined) result.push(next);
    }
    if (result === undefined && marked !== undefined) redactedTrees.set(value, generation);
    return result ?? value;
  }
  if (value !== null && typeof value === 'object') {
    let result: Record<string, unknown> | undefined;
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      const next = redact(item, underSecretKey || isSecretKey(key), generation);
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
    if (result === undefined && marked !== undefined) redactedTrees.set(value, generation);
    return result ?? value;
  }
  return value;
}

function copyOwn(source: Record<string, unknown>): Record<string, unknown> {
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
