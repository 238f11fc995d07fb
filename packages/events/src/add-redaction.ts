import { CrewlineError } from './errors.js';
import { redactionRegistry } from './redaction-registry.js';
import { normalizeName } from './secret-names.js';
import { addSecretValues } from './secret-registration.js';
import { MINIMUM_SECRET_LENGTH } from './secret-shape.js';

/** What a user adds to crewline's redaction (the `redact` checkpoint option has the same shape). */
export interface RedactionOptions {
  /**
   * Names whose values are credentials, matched like the built-in ones: by their ending, whatever the
   * case and separators (`'employeeSsn'` also matches `employee_ssn` and `managerEmployeeSsn`).
   * Default: none.
   */
  names?: readonly string[];
  /**
   * Patterns whose every match is replaced in every string (a string is compiled as a regular
   * expression). They run on every string crewline writes: keep them simple. Default: none.
   */
  patterns?: readonly (RegExp | string)[];
  /**
   * Exact values to scrub, with their URL-encoded and base64 forms; at least
   * {@link MINIMUM_SECRET_LENGTH} characters each. Default: none.
   */
  values?: readonly string[];
}

function refuse(message: string): CrewlineError {
  return new CrewlineError('redaction', 'invalid_argument', message);
}

function globalPattern(pattern: RegExp | string, index: number): RegExp {
  let compiled: RegExp;
  try {
    compiled =
      typeof pattern === 'string' ? new RegExp(pattern, 'g') : new RegExp(pattern.source, pattern.flags);
  } catch (error) {
    throw refuse(
      `patterns[${index}] is not a valid regular expression (${(error as Error).message}); fix or escape it`,
    );
  }
  // Replacing every match needs the global flag; sticky would only match at the start.
  const flags = `${compiled.flags.replace(/[gy]/g, '')}g`;
  const global = new RegExp(compiled.source, flags);
  if (global.test('')) {
    throw refuse(
      `patterns[${index}] (/${compiled.source}/) matches the empty string; make it match something`,
    );
  }
  return global;
}

/**
 * Adds names, patterns and values to redact, for the whole process and every run in it: from then on
 * they are removed from every checkpoint, event, log line and error message crewline writes. Nothing
 * is ever removed again (what was a secret once stays one). Throws `invalid_argument` for an empty
 * name, an invalid pattern or a value shorter than {@link MINIMUM_SECRET_LENGTH}.
 */
export function addRedaction(options: RedactionOptions): void {
  const names = (options.names ?? []).map((name, index) => {
    const normalized = typeof name === 'string' ? normalizeName(name) : '';
    if (normalized === '')
      throw refuse(`names[${index}] has no letters; give a property name such as "employeeSsn"`);
    return normalized;
  });
  const patterns = (options.patterns ?? []).map(globalPattern);
  const values = (options.values ?? []).map((value, index) => {
    if (typeof value !== 'string' || value.length < MINIMUM_SECRET_LENGTH) {
      throw refuse(
        `values[${index}] is ${typeof value === 'string' ? `${value.length} characters long` : 'not a string'}; a value to redact needs at least ${MINIMUM_SECRET_LENGTH} characters (shorter ones would blank ordinary words), so redact it by name or pattern instead`,
      );
    }
    return value;
  });
  // All checked before anything is added: a refused call changes nothing.
  const registry = redactionRegistry();
  const known = new Set(registry.patterns.map(String));
  const namesBefore = registry.names.size;
  for (const name of names) registry.names.add(name);
  const newPatterns = patterns.filter((pattern) => !known.has(String(pattern)));
  registry.patterns.push(...newPatterns);
  if (!addSecretValues(values) && (registry.names.size !== namesBefore || newPatterns.length > 0))
    registry.generation += 1;
}
