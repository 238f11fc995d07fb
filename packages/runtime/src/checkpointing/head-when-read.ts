import { CrewlineError } from '@crewline/events';
import type { LoadedCheckpoint } from '@crewline/runtime-state';

/**
 * A checkpoint as a restore read it (see `loadRestoreTarget`), with what its run looked like then.
 * The mark travels with the object (a copy made with a spread keeps it).
 */
export interface RestoredCheckpoint extends LoadedCheckpoint {
  /**
   * True when the checkpoint was the newest of its run (its lineage and branch) when it was read:
   * the latest was asked for (a bare location, `Crew.fromCheckpoint(location)`), or the checkpoint
   * named had not been continued yet. Whoever continues the run after that read did so behind this
   * reader's back: continuing here would pay again for what they ran, so the continuation is refused
   * (see {@link continuedSinceRead}). False for a checkpoint its run had already gone past when it
   * was read: continuing it is a deliberate re-run, which moves to a new branch. Undefined when not
   * known (a checkpoint read some other way): treated as false.
   */
  headWhenRead?: boolean;
}

/** True when `loaded` was read as the newest checkpoint of its run (see {@link RestoredCheckpoint}). */
export function wasHeadWhenRead(loaded: LoadedCheckpoint): boolean {
  return (loaded as RestoredCheckpoint).headWhenRead === true;
}

/** How a place (the library, a command line, a page) says the two ways on after {@link continuedSinceRead}. */
export interface ContinuedSinceReadAdvice {
  /** How to resume from where the other process got (the run's latest). */
  resumeAgain: string;
  /** How to branch off the checkpoint read on purpose. */
  forkInstead: string;
}

/**
 * The message of {@link continuedSinceRead} with `advice` in the words of where the user is: a command
 * line has flags where the library has options. One message, so that every place says the same.
 */
export function continuedSinceReadMessage(
  checkpointId: string,
  headId: string,
  advice: ContinuedSinceReadAdvice,
): string {
  return `checkpoint ${checkpointId} was the latest of its run when it was read, and another process continued that run since (its latest is now ${headId}); nothing was run. Resume again to continue from where that process got (${advice.resumeAgain}), or fork from ${checkpointId} to branch off it on purpose (${advice.forkInstead})`;
}

/**
 * The refusal of a continuation whose checkpoint was the latest of its run when it was read and was
 * continued by someone else (another process, or another restore in this one) before this run
 * claimed it: moving to a new branch would quietly run, and pay for, the same work a second time.
 */
export function continuedSinceRead(checkpointId: string, headId: string, lineageId: string): CrewlineError {
  return new CrewlineError(
    'runtime',
    'conflict',
    continuedSinceReadMessage(checkpointId, headId, {
      resumeAgain: `restoreFrom the location, or ${headId}`,
      forkInstead: "onConflict: 'fork', or fork()",
    }),
    { details: { checkpointId, headId, lineageId, continuedSinceRead: true } },
  );
}
