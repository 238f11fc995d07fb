import { isSecretKey, REDACTED, registerAddressPasswords, registerSecretValues } from '@crewline/events';

/** Nested deeper than this, kickoff inputs are not walked further: they are a few flat fields. */
const MAX_DEPTH = 32;

/** The strings of kickoff inputs this module registers, each with its path (`db`, `services.replicas[0]`). */
interface FoundInputs {
  /** Under a credential-named field: the whole value is a credential. */
  secrets: { path: string; value: string }[];
  /** Every other string, under any name: the password of one that is an address is a credential. */
  others: { path: string; value: string }[];
}

/**
 * Registers for redaction by value, process-wide, every string of kickoff inputs that redaction
 * replaces by its name (`inputs.apiKey`, and anything under a credential-named field), and the
 * password written in any input, under any name, that is the address of a server
 * (`db: 'postgres://app:…@db/app'`, `…?password=…`, a JDBC address; see `registerAddressPasswords`),
 * which redaction replaces only inside its address: the value also reaches the task descriptions it
 * fills, the prompts, the model's answer that echoes it and the events that carry them, where no name
 * or address marks it. The run calls this before it writes anything (see `RuntimeState`), so that no
 * checkpoint, event or log line holds such a value.
 *
 * Values too short or too plain to be redacted by value without blanking ordinary words (fewer than
 * `MINIMUM_SECRET_LENGTH` characters, numbers, placeholder keys: `secretShapeRefusal`) stay redacted
 * by name only, and so does a password equal to a user name, database name or scheme an address of
 * the inputs shows (`postgres://analytics:analytics@db/analytics`), as for the environment's
 * addresses; `[REDACTED]` itself (an input restored from a checkpoint) is no value to register.
 * Registering a new value moves the redaction generation on, so that whatever a run kept already
 * redacted (settled parts, unchanged snapshots, stored inputs) is scanned again before it is written.
 */
export function registerInputSecrets(inputs: unknown): void {
  if (inputs === null || typeof inputs !== 'object') return;
  const found: FoundInputs = { secrets: [], others: [] };
  collect(inputs, '', false, found, new Set(), 0);
  // One source per input: its name says where a refused value came from, never the value.
  for (const { path, value } of found.secrets) registerSecretValues([value], `kickoff input "${path}"`);
  registerAddressPasswords(
    [...found.secrets, ...found.others].map(({ path, value }) => ({
      source: `kickoff input "${path}"`,
      value,
    })),
  );
}

function collect(
  value: unknown,
  path: string,
  underSecretKey: boolean,
  found: FoundInputs,
  seen: Set<object>,
  depth: number,
): void {
  if (typeof value === 'string') {
    if (value === REDACTED) return;
    (underSecretKey ? found.secrets : found.others).push({ path, value });
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
