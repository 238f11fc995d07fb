import { CrewlineError, type CrewlineErrorCode, type CrewlineErrorOptions } from '@crewline/events';

/** Throws a {@link CrewlineError} from the CLI component. */
export function cliError(
  code: CrewlineErrorCode,
  message: string,
  options?: CrewlineErrorOptions,
): CrewlineError {
  return new CrewlineError('cli', code, message, options);
}

/** A mistake in how the command was called: exit code 2. */
export function usageError(message: string): CrewlineError {
  return cliError('invalid_argument', message);
}
