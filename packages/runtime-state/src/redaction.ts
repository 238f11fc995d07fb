import { isSecretKey, REDACTED, redactSecretsInText } from '@crewline/events';

/**
 * Returns a copy of a JSON-safe value in which every string under a credential-named key
 * (`apiKey`, `authorization`, `password`, ...) and every substring that looks like a known API key
 * is replaced by `[REDACTED]`. The input is not modified; unchanged subtrees are shared.
 */
export function redactSecrets<T>(value: T): T {
  return redact(value, false) as T;
}

function redact(value: unknown, underSecretKey: boolean): unknown {
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
      const next = redact(item, underSecretKey || isSecretKey(key));
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
