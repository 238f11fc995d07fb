import { CrewlineError, type CrewlineErrorCode, type CrewlineErrorOptions } from '@crewline/events';

/** The component every error of this package names. */
export const component = 'worker';

/** A `CrewlineError` of this package: `[worker] <message>`. */
export function workerError(
  code: CrewlineErrorCode,
  message: string,
  options: CrewlineErrorOptions = {},
): CrewlineError {
  return new CrewlineError(component, code, message, options);
}

/** The message of anything thrown, for a one-line reason stored with a run. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : JSON.stringify(error);
}
