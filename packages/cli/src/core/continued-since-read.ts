import { CrewlineError } from '@crewline/events';
import { type ContinuedSinceReadAdvice, continuedSinceReadMessage } from '@crewline/runtime/internal';
import { cliError } from './cli-error.js';

/**
 * The runtime's refusal of a resume whose run another process continued after the checkpoint was
 * read as its latest (`continuedSinceRead`), said where the user is: the library's message advises
 * `restoreFrom` and its `onConflict: 'fork'` option, which a command line spells as commands and
 * `--on-conflict fork`, and a page as its form. One message (the runtime's
 * `continuedSinceReadMessage`), built from the refusal's details; the code (`conflict`, exit code 1)
 * and the details stay. Undefined for any other error.
 */
export function continuedSinceReadInWords(
  error: unknown,
  advice: (checkpointId: string, headId: string) => ContinuedSinceReadAdvice,
): CrewlineError | undefined {
  if (!CrewlineError.hasCode(error, 'conflict')) return undefined;
  const { checkpointId, headId, continuedSinceRead } = error.details ?? {};
  if (continuedSinceRead !== true || typeof checkpointId !== 'string' || typeof headId !== 'string')
    return undefined;
  return cliError('conflict', continuedSinceReadMessage(checkpointId, headId, advice(checkpointId, headId)), {
    cause: error,
    details: error.details,
  });
}

/** The terminal UI's ways on (its keys: r reloads the tree, e resumes, f forks the selected checkpoint). */
export function continuedSinceReadWordsOfBrowser(
  checkpointId: string,
  headId: string,
): ContinuedSinceReadAdvice {
  return {
    resumeAgain: `press r to reload the tree, select ${headId}, the run's latest, and press e`,
    forkInstead: `press f on ${checkpointId}`,
  };
}
