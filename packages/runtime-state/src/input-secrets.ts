import { isSecretKey, REDACTED, registerSecretValues } from '@crewline/events';

/** Nested deeper than this, kickoff inputs are not walked further: they are a few flat fields. */
const MAX_DEPTH = 32;

/**
 * Registers for redaction by value, process-wide, every string of kickoff inputs that redaction
 * replaces by its name (`inputs.apiKey`, and anything under a credential-named field): the value
 * also reaches the task descriptions it fills, the prompts, the model's answer that echoes it and
 * the events that carry them, where no name marks it. The run calls this before it writes anything
 * (see `RuntimeState`), so that no checkpoint, event or log line holds such a value.
 *
 * Values too short or too plain to be redacted by value without blanking ordinary words (fewer than
 * `MINIMUM_SECRET_LENGTH` characters, numbers, placeholder keys: `secretShapeRefusal`) stay redacted
 * by name only; `[REDACTED]` itself (an input restored from a checkpoint) is no value to register.
 * Registering a new value moves the redaction generation on, so that whatever a run kept already
 * redacted (settled parts, unchanged snapshots, stored inputs) is scanned again before it is written.
 */
export function registerInputSecrets(inputs: unknown): void {
  if (inputs === null || typeof inputs !== 'object') return;
  const found: { path: string; value: string }[] = [];
  collect(inputs, '', false, found, new Set(), 0);
  // One source per input: its name says where a refused value came from, never the value.
  for (const { path, value } of found) registerSecretValues([value], `kickoff input "${path}"`);
}

function collect(
  value: unknown,
  path: string,
  underSecretKey: boolean,
  found: { path: string; value: string }[],
  seen: Set<object>,
  depth: number,
): void {
  if (typeof value === 'string') {
    if (underSecretKey && value !== REDACTED) found.push({ path, value });
    return;
  }
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH || seen.has(value)) return;
  seen.add(value);
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      collect(item, `${path}[${index}]`, underSecretKey, found, seen, depth + 1);
    });
    return;
  }
  // Plain records only, as redaction walks them: a class instance's fields are its own business.
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return;
  for (const key of Object.keys(value)) {
    collect(
      (value as Record<string, unknown>)[key],
      path === '' ? key : `${path}.${key}`,
      underSecretKey || isSecretKey(key),
      found,
      seen,
      depth + 1,
    );
  }
}
