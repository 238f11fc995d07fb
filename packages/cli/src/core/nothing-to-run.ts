import { CrewlineError } from '@crewline/events';
import { type NothingToRun, nothingToRunMessage } from '@crewline/runtime/internal';
import type { EntityKind } from '@crewline/runtime-state';
import { cliError } from './cli-error.js';

/** How to make something run again, by the kind of the run, in the words of one place. */
export type RunAgainWords = Record<EntityKind, string>;

/**
 * The runtime's refusal of a continuation with nothing to run, said where the user is: the library's
 * message names its `taskOutputs` option and the CLI's `--set-output`, which the terminal UI spells
 * as its Tasks tab and the explorer as its form. One message (the runtime's `nothingToRunMessage`),
 * built from the refusal's details; the code (`invalid_argument`) and the details stay. Undefined for
 * any other error.
 */
export function nothingToRunInWords(error: unknown, words: RunAgainWords): CrewlineError | undefined {
  if (!CrewlineError.hasCode(error, 'invalid_argument')) return undefined;
  const nothingToRun = error.details?.nothingToRun as NothingToRun | undefined;
  if (nothingToRun === undefined || typeof nothingToRun !== 'object') return undefined;
  return cliError('invalid_argument', nothingToRunMessage(nothingToRun, words[nothingToRun.kind]), {
    cause: error,
    details: error.details,
  });
}

// A flow's method is run again from a saved state by the command line in both places.
const rerunAFlow =
  're-run one of its methods and those after it from a saved state (crewline checkpoint flows rerun --from METHOD), or kick off a new run for new inputs';
const runAnAgentAgain = 'kick off the agent again for new inputs';

/** The terminal UI's ways (its keys: 2 opens the Tasks tab, Enter edits the selected output). */
export const runAgainWordsOfBrowser: RunAgainWords = {
  crew: "edit a task's output in the Tasks tab (2, then Enter on the task) so the tasks after it run again, or kick off a new run for new inputs",
  flow: rerunAFlow,
  agent: runAnAgentAgain,
};

/** The explorer's ways (its form). */
export const runAgainWordsOfPage: RunAgainWords = {
  crew: "edit a task's output in the form so the tasks after it run again, or kick off a new run for new inputs",
  flow: rerunAFlow,
  agent: runAnAgentAgain,
};
