import { redactSecretsInText } from './secret-patterns.js';

// Symbol.for: every copy of this package in a process brands with the same symbol, so isInstance holds
// across copies. The version names the shape the brand promises (code, component, details); a change
// to it takes a new key. The CLI checks the same key without loading this package.
const brand = Symbol.for('crewline.error.v1');

/**
 * Every code a crewline package may put on an error. One closed union so that callers can switch on
 * `error.code` exhaustively, whichever package threw.
 */
export type CrewlineErrorCode =
  | 'invalid_config'
  | 'invalid_argument'
  | 'invalid_name'
  | 'not_found'
  | 'ambiguous_reference'
  | 'corrupt_checkpoint'
  | 'unsupported_version'
  | 'too_large'
  | 'write_failed'
  | 'read_failed'
  | 'conflict'
  | 'provider_unavailable'
  | 'not_rebuildable'
  | 'invalid_state'
  | 'model_error'
  | 'tool_error'
  | 'aborted';

export interface CrewlineErrorOptions {
  cause?: unknown;
  /** Extra structured detail for programs (never secrets). */
  details?: Record<string, unknown>;
}

/**
 * Scrubs credentials, in place, from the strings of an error and its causes: message, stack, and the
 * fields an HTTP client error carries (`responseBody`, the parsed `data` of a response...), plain
 * objects and arrays included. The cause of a crewline error is often such an error quoting what a
 * server echoed back, key included, and whoever prints the crewline error prints its causes too.
 * Changing text in place keeps each cause's class and other fields for programs that inspect them.
 */
function redactCauses(value: unknown, depth = 0, seen = new Set<object>()): unknown {
  if (value === null || typeof value !== 'object' || depth > 6 || seen.has(value)) return value;
  const prototype = Object.getPrototypeOf(value);
  const plain = Array.isArray(value) || prototype === Object.prototype || prototype === null;
  if (!plain && !(value instanceof Error)) return value;
  seen.add(value);
  for (const name of Object.getOwnPropertyNames(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, name);
    if (descriptor === undefined || !('value' in descriptor)) continue;
    if (typeof descriptor.value === 'string') {
      const redacted = redactSecretsInText(descriptor.value);
      if (redacted !== descriptor.value && descriptor.writable)
        (value as Record<string, unknown>)[name] = redacted;
    } else {
      redactCauses(descriptor.value, depth + 1, seen);
    }
  }
  return value;
}

/**
 * Base of every error crewline throws. The message starts with the component in brackets, names what
 * is wrong and says how to fix it; credentials are scrubbed from it and from its causes.
 * `error instanceof CrewlineError` holds for an error of another copy of this package in the process
 * too (it checks the brand, like {@link CrewlineError.isInstance}); `instanceof` a subclass keeps its
 * ordinary meaning.
 */
export class CrewlineError extends Error {
  readonly code: CrewlineErrorCode;
  readonly component: string;
  readonly details: Record<string, unknown> | undefined;
  readonly [brand] = true;

  constructor(
    component: string,
    code: CrewlineErrorCode,
    message: string,
    options: CrewlineErrorOptions = {},
  ) {
    super(
      `[${component}] ${redactSecretsInText(message)}`,
      options.cause === undefined ? undefined : { cause: redactCauses(options.cause) },
    );
    this.name = 'CrewlineError';
    this.code = code;
    this.component = component;
    this.details = options.details;
  }

  /**
   * `instanceof CrewlineError` by the brand: two copies of this package in one install (two versions,
   * or one bundled) each have their own class, and an error thrown by one must still be a
   * CrewlineError to code that imported the other. Subclasses are compared by their prototype chain as
   * usual: a brand says an error is a crewline error, not which subclass it is.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // `this` is the class right of `instanceof`: CrewlineError itself, or a subclass.
    // biome-ignore lint/complexity/noThisInStatic: which class is asked is the point
    if (this === CrewlineError) return CrewlineError.isInstance(value);
    // biome-ignore lint/complexity/noThisInStatic: a subclass keeps the prototype-chain check
    return Function.prototype[Symbol.hasInstance].call(this, value);
  }

  static isInstance(value: unknown): value is CrewlineError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }

  /** True when `value` is a crewline error with the given code. */
  static hasCode(value: unknown, code: CrewlineErrorCode): value is CrewlineError {
    return CrewlineError.isInstance(value) && value.code === code;
  }
}
