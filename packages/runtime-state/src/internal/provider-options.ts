import { CrewlineError } from '@crewline/events';
import { formatIssues } from '../errors.js';

/** What a zod issue carries that the message needs (zod's own type is not part of this contract). */
export interface OptionIssue {
  code: string;
  path: readonly PropertyKey[];
  message: string;
  keys?: readonly string[];
}

/**
 * The `invalid_config` error of `component` for the options of `className` that its (strict) zod
 * schema refused: unknown option names are listed with `knownOptions` (the sentence that names the
 * real ones), other problems as `path: message` lines.
 */
export function invalidOptions(
  component: string,
  className: string,
  issues: readonly OptionIssue[],
  knownOptions: string,
): CrewlineError {
  const unknownKeys = issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys' ? (issue.keys ?? []) : [],
  );
  const hint =
    unknownKeys.length > 0
      ? `unknown option ${unknownKeys.map((key) => `"${key}"`).join(', ')}; ${knownOptions}`
      : formatIssues(issues);
  return new CrewlineError(component, 'invalid_config', `${className} options: ${hint}`);
}
