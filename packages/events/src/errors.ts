const brand = Symbol.for('crewline.error');

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
 * Base of every error crewline throws. The message starts with the component in brackets, names what
 * is wrong and says how to fix it. Use {@link CrewlineError.isInstance} rather than `instanceof`:
 * two copies of a package in one install break `instanceof`, the brand survives it.
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
    super(`[${component}] ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CrewlineError';
    this.code = code;
    this.component = component;
    this.details = options.details;
  }

  static isInstance(value: unknown): value is CrewlineError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }

  /** True when `value` is a crewline error with the given code. */
  static hasCode(value: unknown, code: CrewlineErrorCode): value is CrewlineError {
    return CrewlineError.isInstance(value) && value.code === code;
  }
}
