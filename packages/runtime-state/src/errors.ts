import { CrewlineError, type CrewlineErrorCode, type CrewlineErrorOptions } from '@crewline/events';

/** The component this package's errors and log lines name. */
export const component = 'runtime-state';

/** Throws a {@link CrewlineError} from the runtime-state component. */
export function stateError(
  code: CrewlineErrorCode,
  message: string,
  options?: CrewlineErrorOptions,
): CrewlineError {
  return new CrewlineError(component, code, message, options);
}

/** Turns zod issues into `path: message` lines. */
export function formatIssues(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 8)
    .map(
      (issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)'}: ${issue.message}`,
    )
    .join('; ');
}
