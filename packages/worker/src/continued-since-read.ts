import { CrewlineError } from '@crewline/events';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { workerError } from './errors.js';
import { withClaims } from './lineage-recording.js';

/** The checkpoint an attempt continues, as the worker read it: the latest of the run's lineage. */
export interface ReadAsLatest {
  runId: string;
  checkpointId: string;
}

/**
 * The provider an attempt continues its run through, for a run whose latest checkpoint the worker
 * read (`read`). The runtime refuses to continue a checkpoint that was its run's latest when the
 * runtime read it and was continued since (`conflict`, `details.continuedSinceRead`), but it reads the
 * checkpoint again after the worker, by its id: a continuation landing between the two reads made it
 * look like an older checkpoint named on purpose, which the runtime re-runs on a new branch, paying
 * again for what the other process ran. So a claim of that checkpoint that finds the lineage moved
 * on is refused here the same way, whenever the other process continued it: no checkpointed
 * completion is made twice, and the worker hands the run back to continue the newest checkpoint.
 */
export function refusingContinuedSinceRead(
  provider: CheckpointProvider,
  read: ReadAsLatest | undefined,
): CheckpointProvider {
  if (read === undefined) return provider;
  return withClaims(provider, (claimLease) => async (location, request) => {
    try {
      return await claimLease(location, request);
    } catch (error) {
      const headId = CrewlineError.hasCode(error, 'conflict') ? error.details?.headId : undefined;
      if (request.checkpointId !== read.checkpointId || typeof headId !== 'string') throw error;
      // Without `headId` in its details: the runtime passes a conflict without it on as it is,
      // where one with it would send the run onto a new branch.
      throw workerError(
        'conflict',
        `run ${read.runId}: checkpoint ${read.checkpointId} was the latest of its lineage when this worker read it, and another process continued the run since (its latest is now ${headId}); nothing was run, and the run goes back to the queue to continue from its latest`,
        {
          cause: error,
          details: {
            checkpointId: read.checkpointId,
            lineageId: request.lineageId,
            latestId: headId,
            continuedSinceRead: true,
          },
        },
      );
    }
  });
}

/**
 * Whether `error` refused to continue a checkpoint read as its run's latest because another process
 * continued the run since (the runtime's refusal, or {@link refusingContinuedSinceRead}'s): nothing
 * was run, nothing is wrong with the run.
 */
export function continuedSinceRead(error: unknown): boolean {
  return CrewlineError.hasCode(error, 'conflict') && error.details?.continuedSinceRead === true;
}
