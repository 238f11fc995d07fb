import { stateError } from '../errors.js';
import type { CheckpointProvider, CheckpointWrite, StoredCheckpoint } from '../provider.js';
import type { PreparedWrite, WriteOutcomes } from './write-outcomes.js';
import type { WriteQueue } from './write-queue.js';

/**
 * Writes `prepared` synchronously (`RuntimeState.writeCheckpointSync`: a strict checkpoint, or an
 * automatic one on a provider that writes inside its events), after the checkpoints of its store
 * still queued in `queue` for a background write; throws on failure.
 */
export function writeStrictly(
  prepared: PreparedWrite,
  queue: WriteQueue,
  outcomes: WriteOutcomes,
): StoredCheckpoint {
  const { provider, resolvedLocation, write, companion, succeed, fail } = prepared;
  if (!provider.writeSync) {
    return fail(
      stateError(
        'invalid_config',
        `the ${provider.kind} provider cannot write synchronously; use acheckpoint() or an async handler`,
      ),
    );
  }
  const stopped = queue.writeAheadSync(provider, resolvedLocation);
  if (stopped !== undefined) {
    // A checkpoint queued ahead of this one (its parent, or an ancestor) could not be written:
    // this one is not written either, and the lineage goes back to the last one stored.
    try {
      fail(stopped.error);
    } finally {
      stopped.rejectRest();
    }
  }
  // Right before the fork's first checkpoint, and once more right after it: see ForkOrigin.
  const copied =
    companion === undefined || storeCompanionSync(provider, resolvedLocation, companion, true, outcomes);
  let stored: StoredCheckpoint;
  try {
    stored = provider.writeSync(resolvedLocation, write);
  } catch (error) {
    return fail(error);
  }
  if (companion !== undefined) storeCompanionSync(provider, resolvedLocation, companion, copied, outcomes);
  return succeed(stored);
}

/** Stores a fork's origin again (see ForkOrigin); a failure is logged when `report`. */
function storeCompanionSync(
  provider: CheckpointProvider,
  location: string,
  companion: CheckpointWrite,
  report: boolean,
  outcomes: WriteOutcomes,
): boolean {
  try {
    // Only called once writeStrictly found writeSync.
    provider.writeSync?.(location, companion);
    return true;
  } catch (error) {
    if (report) outcomes.companionFailed(companion, location, error);
    return false;
  }
}
