import { CrewlineError } from '@crewline/events';
import type { CheckpointProvider, StoredCheckpoint } from '@crewline/runtime-state';
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
 * The claim is the attempt's first, before anything ran, or the runtime's claim again after its
 * lease may have run out (it names the last checkpoint it stored, this one while it stored none):
 * then a model call may have been made, and paid, whose checkpoint was never stored; the refusal's
 * message says so in words true of both.
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
        `run ${read.runId}: checkpoint ${read.checkpointId} was the latest of its lineage when this worker read it, and another process continued the run since (its latest is now ${headId}); this attempt stores nothing after ${read.checkpointId} (what it ran since its read and no checkpoint holds is dropped), and the run goes back to the queue to continue from its latest`,
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

/** A failed attempt, as the worker ends it. */
export interface FailedAttempt {
  kind: 'failed';
  error: unknown;
  retryable: boolean;
}

/**
 * The end of an attempt refused as {@link continuedSinceRead} (`refusal`): the refusal itself, which
 * the worker hands back at once without counting a failure, only when the lineage really moved past
 * the checkpoint the attempt read as its latest (`read`): its latest, read again, is the head the
 * refusal found, or one past `read`. Otherwise the provider's `latest()` disagrees with its claims
 * (a caching wrapper, a read replica behind the primary, a subclass reading elsewhere: any provider
 * is accepted) and would keep answering what the refused claim named: handed back for free, the run
 * would be taken and refused again at once, for ever. That is a failed attempt, retried with the
 * back-off up to `maxAttempts`, so a provider that catches up continues the run and one that never
 * does fails it with this reason. One read of `latest()` more, and only on the rare refusal: nothing
 * to remember between attempts or between workers.
 */
export async function refusalEnd(
  provider: CheckpointProvider,
  location: string,
  runId: string,
  read: StoredCheckpoint | undefined,
  refusal: unknown,
): Promise<FailedAttempt> {
  const details = CrewlineError.isInstance(refusal) ? refusal.details : undefined;
  // The worker's refusal names the head `latestId`, the runtime's `headId`.
  const head = details?.latestId ?? details?.headId;
  let latest: StoredCheckpoint | undefined;
  if (read !== undefined) {
    try {
      latest = await provider.latest(location, { lineageId: read.lineageId });
    } catch (error) {
      // Whether the run moved on is not known: a failure of the moment, as the first read's.
      return { kind: 'failed', error, retryable: true };
    }
    if (latest !== undefined && (latest.id === head || isPast(latest, read))) {
      return { kind: 'failed', error: refusal, retryable: true };
    }
  }
  const readId = read?.id ?? details?.checkpointId;
  const error = workerError(
    'conflict',
    `run ${runId}: the claim of checkpoint ${readId}, read as the latest of its lineage, found the lineage's head at ${head}, but the provider's latest() read again answers ${latest?.id ?? 'nothing'}, not a checkpoint past ${readId}: ${latest === undefined ? "the lineage's checkpoints were removed since (a prune or delete), or " : ''}the provider's latest() lags the store it claims in (a cache or a read replica in front of it?), and nobody is known to have continued the run, so this attempt counts as failed and the run is retried after the back-off`,
    {
      cause: refusal,
      details: { checkpointId: readId, lineageId: read?.lineageId, latestId: head, answeredId: latest?.id },
    },
  );
  return { kind: 'failed', error, retryable: true };
}

/** Whether `checkpoint` comes after `read` on their lineage (events only grow along one). */
function isPast(checkpoint: StoredCheckpoint, read: StoredCheckpoint): boolean {
  if (checkpoint.id === read.id) return false;
  if (checkpoint.eventCount !== read.eventCount) return checkpoint.eventCount > read.eventCount;
  return checkpoint.createdAt > read.createdAt;
}

/**
 * Whether `error` refused to continue a checkpoint read as its run's latest because another process
 * continued the run since (the runtime's refusal, or {@link refusingContinuedSinceRead}'s): nothing
 * is wrong with the run, and nothing this attempt ran is stored after that checkpoint.
 */
export function continuedSinceRead(error: unknown): boolean {
  return CrewlineError.hasCode(error, 'conflict') && error.details?.continuedSinceRead === true;
}
