import { isSecretKey, REDACTED, redactSecretsInText } from '@crewline/events';

/**
 * Returns a copy of a JSON-safe value in which every string under a credential-named key
 * (`apiKey`, `authorization`, `password`, ...) and every substring that looks like a known API key
 * is replaced by `[REDACTED]`. The input is not modified; unchanged subtrees are shared.
 */
export function redactSecrets<T>(value: T): T {
  return redact(value, false) as T;
}

// Subtrees already redacted that their owner promises never to change again (a completed task's
// stored form, for instance). A run checkpointing on every event snapshots the same completed work
// hundreds of times; scanning it once is enough.
const redactedTrees = new WeakSet<object>();

/**
 * Redacts `value` once and remembers the result: later {@link redactSecrets} calls return that
 * subtree as is instead of scanning it again (unless it sits under a credential-named key). Only for
 * values that are never mutated afterwards.
 */
export function markRedacted<T>(value: T): T {
  const redacted = redact(value, false) as T;
  if (redacted !== null && typeof redacted === 'object') redactedTrees.add(redacted as object);
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

// Object keys repeat endlessly across snapshots ("role", "content", "status"...); deciding whether a
// key names a credential is worth remembering. Bounded so that odd keys cannot grow it forever.
const secretKeyCache = new Map<string, boolean>();

function isSecretKeyCached(key: string): boolean {
  let known = secretKeyCache.get(key);
  if (known === undefined) {
    known = isSecretKey(key);
    if (secretKeyCache.size >= 10_000) secretKeyCache.clear();
    secretKeyCache.set(key, known);
  }
  return known;
}

function redact(value: unknown, underSecretKey: boolean): unknown {
  if (!underSecretKey && value !== null && typeof value === 'object' && redactedTrees.has(value))
    return value;
  if (typeof value === 'string') {
    if (underSecretKey && value.length > 0) return REDACTED;
    return redactSecretsInText(value);
  }
  if (Array.isArray(value)) {
    let changed = false;
    const result = value.map((item) => {
      const next = redact(item, underSecretKey);
      if (next !== item) changed = true;
      return next;
    });
    return changed ? result : value;
  }
  if (value !== null && typeof value === 'object') {
    let result: Record<string, unknown> | undefined;
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      const next = redact(item, underSecretKey || isSecretKeyCached(key));
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
