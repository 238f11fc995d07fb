import { CrewlineError } from '@crewline/events';
import { cliError } from './cli-error.js';

/**
 * The runtime's refusal of a fork onto `branch`, which already has checkpoints, said where the user
 * is: the runtime names its `branch` option, a command its `--branch` flag, the browser its prompt.
 * `howToRename` completes "branch X already exists in Y; …". Undefined for any other error.
 */
export function branchTaken(
  error: unknown,
  branch: string | undefined,
  howToRename: string,
): CrewlineError | undefined {
  if (branch === undefined || !CrewlineError.hasCode(error, 'conflict') || error.details?.branch !== branch)
    return undefined;
  const where = typeof error.details.location === 'string' ? error.details.location : 'this location';
  return cliError('conflict', `branch "${branch}" already exists in ${where}; ${howToRename}`, {
    cause: error,
    details: error.details,
  });
}

/** How the browser's user picks another name (its fork prompt, `f`). */
export const renameInBrowser =
  'press f on the checkpoint again and type another branch name, or leave the name empty to generate one';
