// Registering credential values in the process-wide registry, and telling once per source of a value
// left out for its shape. Split from secret-values.ts, which finds the registered values in text.
import { base64Cores, base64Forms } from './base64-cores.js';
import { type RedactionRegistry, redactionRegistry } from './redaction-registry.js';
import { MINIMUM_SECRET_LENGTH, secretShapeRefusal } from './secret-shape.js';

/** Told once per source of a credential value that is not redacted by value (see the logger). */
export type UnregisteredCredentialReporter = (source: string, reason: string) => void;

let reporter: UnregisteredCredentialReporter | undefined;
const reportedSources = new Set<string>();

/**
 * Sets who is told of a credential not redacted by value. The logger sets it when it loads (it cannot
 * be imported here: it redacts what it writes, with this module).
 */
export function reportUnregisteredCredentialsTo(next: UnregisteredCredentialReporter): void {
  reporter = next;
}

/** Tells the reporter why a value of `source` is not redacted by value, once per source. */
export function reportUnregisteredCredential(source: string | undefined, reason: string): void {
  if (source === undefined || reportedSources.has(source)) return;
  reportedSources.add(source);
  reporter?.(source, reason);
}

function addValue(registry: RedactionRegistry, value: string): boolean {
  if (registry.values.has(value)) return false;
  registry.values.add(value);
  const encoded = encodeURIComponent(value);
  if (encoded !== value) registry.values.add(encoded);
  // This copy derives its needles from `values` when it builds its index (currentIndex); the cores
  // are written for the copies of the package that read them instead.
  for (const { core } of base64Cores(Buffer.from(value, 'utf8')))
    for (const form of base64Forms(core)) registry.encodedValues.add(form);
  return true;
}

/** Registers values (already checked); true when one was new. */
export function addSecretValues(values: Iterable<string>): boolean {
  const registry = redactionRegistry();
  let added = false;
  for (const value of values) if (addValue(registry, value)) added = true;
  if (added) registry.generation += 1;
  return added;
}

/**
 * Adds credential values to the process-wide registry: from then on every string crewline writes
 * (checkpoints, events, logs, error messages) has them, their URL-encoded and their base64 forms,
 * replaced by `[REDACTED]`. Values `secretShapeRefusal` refuses are ignored: shorter than
 * {@link MINIMUM_SECRET_LENGTH}, booleans, numbers, documented placeholder keys (`lm-studio`,
 * `sk-no-key-required`: `PLACEHOLDER_KEYS`) and fillers (`sk-xxxxxxxx`); `undefined`, `null` and `''` too,
 * so a credential setting can be passed as read. `source` names where the values come from (never the
 * value: `environment variable PGPASSWORD`); a value ignored for its shape is then logged once at
 * debug level with that name and why. To redact a value whatever its shape, use `addRedaction`.
 */
export function registerSecretValues(values: Iterable<string | null | undefined>, source?: string): void {
  const accepted: string[] = [];
  for (const value of values) {
    if (typeof value !== 'string' || value.trim() === '') continue;
    const trimmed = value.trim();
    const refusal = secretShapeRefusal(trimmed);
    if (refusal !== undefined) {
      reportUnregisteredCredential(source, refusal);
      continue;
    }
    accepted.push(trimmed);
    if (trimmed !== value) accepted.push(value);
  }
  addSecretValues(accepted);
}

/** One value; see {@link registerSecretValues}. */
export function registerSecretValue(value: string | null | undefined, source?: string): void {
  registerSecretValues([value], source);
}
