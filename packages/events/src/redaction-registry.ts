/**
 * What this process redacts beyond the built-in rules: credential values read from the environment or
 * configuration, and the names, patterns and values users add. Plain data, so that every copy of
 * `@crewline/events` in one install (each compiles its own matchers from it) agrees on it.
 */
export interface RedactionRegistry {
  /** Shape of this object; a copy of the package that finds another number leaves it alone. */
  readonly version: 1;
  /** Exact values to scrub from every string, with their URL-encoded forms. */
  readonly values: Set<string>;
  /**
   * Base64 runs that any base64 text containing one of `values` includes, whatever its offset. Written
   * for the copies of this package that read them; this one derives its own from `values` (with how far
   * each widens), so that forms a copy registering a value first did not know are found too.
   */
  readonly encodedValues: Set<string>;
  /** Credential names users added, normalized (lower case, letters and digits only). */
  readonly names: Set<string>;
  /** Patterns users added (global); every match is replaced. */
  readonly patterns: RegExp[];
  /** Bumped on every change, so that compiled matchers and caches know they are stale. */
  generation: number;
  /** Whether `process.env` has been read (it is read once, on first use). */
  environmentRead: boolean;
}

// One slot per process (Symbol.for is shared across module copies and realms of one process): two
// copies of this package must not each keep half of the secrets.
const registrySlot = Symbol.for('crewline.redaction');

let cached: RedactionRegistry | undefined;

/** The process-wide registry, created on first use. */
export function redactionRegistry(): RedactionRegistry {
  // Looked up once per module copy: it is asked for on every redacted string, and once in the slot a
  // registry is never replaced.
  if (cached !== undefined) return cached;
  const holder = globalThis as Record<symbol, { version?: unknown } | undefined>;
  const current = holder[registrySlot];
  if (current?.version === 1) {
    cached = current as RedactionRegistry;
    return cached;
  }
  cached = {
    version: 1,
    values: new Set(),
    encodedValues: new Set(),
    names: new Set(),
    patterns: [],
    generation: 0,
    environmentRead: false,
  };
  // A registry of another shape belongs to a newer copy of the package: this copy keeps its own
  // rather than overwrite it.
  if (current === undefined) holder[registrySlot] = cached;
  return cached;
}

/**
 * A number that changes whenever names, patterns or values are added to redaction. Whoever keeps
 * already-redacted data (a run's `SettledValues` in `@crewline/runtime-state`) compares it to know whether that
 * data must be scanned again.
 */
export function redactionGeneration(): number {
  return redactionRegistry().generation;
}
