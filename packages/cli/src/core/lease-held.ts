import { CrewlineError } from '@crewline/events';
import { leaseHeldAdvice, leaseHeldMessage } from '@crewline/runtime-state/internal';
import { cliError } from './cli-error.js';

/** How the place the user is in says the advice of a refused claim. */
export interface LeaseHeldWords {
  /** How to fork instead there: a flag, a key, a form's choice. */
  forkInstead: string;
  /** What to do once the holder has ended, after "wait for it to end (…)": run it again there. */
  thenResume?: string;
  /** After the lineage's name: where that id is found (a command line names its listing). */
  lineageNote?: string;
}

/**
 * The store's refusal of a claim on a lineage another process continues, said where the user is:
 * the library's message advises its `onConflict: 'fork'` option, which a command line spells
 * `--on-conflict fork` and a page or the browser offers as a choice. One message
 * (`leaseHeldMessage`), built from the refusal's details; the code (`conflict`) and the details
 * stay. Undefined for any other error.
 */
export function leaseHeld(error: unknown, words: LeaseHeldWords): CrewlineError | undefined {
  if (!CrewlineError.hasCode(error, 'conflict')) return undefined;
  const { lineageId, holder, expiresInMs, atClaim, holderRunsHere, holderNotRunningHere, holderPid } =
    error.details ?? {};
  if (
    atClaim !== true ||
    typeof lineageId !== 'string' ||
    typeof holder !== 'string' ||
    typeof expiresInMs !== 'number'
  )
    return undefined;
  const advice = leaseHeldAdvice(
    words.forkInstead,
    holderRunsHere === true,
    words.thenResume,
    // The pid the store found not running here (provider-postgres), never read out of the holder.
    holderNotRunningHere === true && typeof holderPid === 'number' ? holderPid : undefined,
  );
  return cliError('conflict', leaseHeldMessage(lineageId, holder, expiresInMs, advice, words.lineageNote), {
    cause: error,
    details: error.details,
  });
}

/** `crewline checkpoint resume|fork`: its flag, and where the lineage id it names is listed. */
export const leaseWordsOfCommandLine: LeaseHeldWords = {
  forkInstead: '`--on-conflict fork` continues on a new branch at once',
  // Beside `crewline runs list`, whose run ids are the queue's, a lineage id read as a run id nobody
  // could find there.
  lineageNote: '(the RUN of crewline checkpoint list, not a run id of crewline runs list)',
};

/** `crewline checkpoint browse`: its keys (`f` forks, `e` resumes). */
export const leaseWordsOfBrowser: LeaseHeldWords = {
  forkInstead: 'press f on the checkpoint to continue it on a new branch at once',
  thenResume: ' and press e again',
};

/**
 * The explorer's page (`checkpoint serve`): the choice and the button of its "Continue from here"
 * form; the page shows no lineage ids, so the lineage is named by the checkpoint the run continued.
 */
export function leaseWordsOfPage(checkpointId: string): LeaseHeldWords {
  return {
    forkInstead: 'choose "fork onto a new branch" under "Continue from here" and press Run',
    thenResume: ' and press Run again',
    lineageNote: `(the run checkpoint ${checkpointId} belongs to)`,
  };
}
