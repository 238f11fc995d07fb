import { CrewlineError, type CrewlineErrorCode, type CrewlineErrorOptions } from '@crewline/events';

export const component = 'provider-json';

/** A {@link CrewlineError} from the JSON provider. */
export function jsonError(
  code: CrewlineErrorCode,
  message: string,
  options?: CrewlineErrorOptions,
): CrewlineError {
  return new CrewlineError(component, code, message, options);
}

/** The `code` of a Node.js system error (`ENOENT`, `EEXIST`...), if it has one. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
    ? (error as { code: string }).code
    : undefined;
}

/** The message of anything thrown, for wrapping into a typed error. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
