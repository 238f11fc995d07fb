import type { CrewlineError } from '@crewline/events';
import { leaseHeldMessage } from '@crewline/runtime-state/internal';

/**
 * What a run that continues on a new branch instead of its own says, given the store's `conflict`
 * refusal of its claim on `checkpointId`: its checkpoint is not the latest of its run any more, or
 * someone holds the run (the caller asked to fork then: `onConflict: 'fork'`). Built from the
 * refusal's details, not its message: that message starts with the store's component and advises
 * waiting or forking, which the caller already chose, and the logger adds the runtime's own prefix.
 */
export function forkOnConflictMessage(refusal: CrewlineError, checkpointId: string, branch: string): string {
  const continuing = `continuing on a new branch, ${branch}, so nothing of that lineage is overwritten`;
  const details = refusal.details ?? {};
  if (typeof details.headId === 'string') return olderCheckpointMessage(checkpointId, details.headId, branch);
  const lineageId = typeof details.lineageId === 'string' ? details.lineageId : undefined;
  if (
    lineageId !== undefined &&
    typeof details.holder === 'string' &&
    typeof details.expiresInMs === 'number'
  ) {
    return leaseHeldMessage(lineageId, details.holder, details.expiresInMs, continuing);
  }
  // A store that says less (a third-party provider's refusal without details).
  return `the lineage of checkpoint ${checkpointId} is held by another process (${refusal.component} refused to let this run continue it); ${continuing}`;
}

/** What a resume of `checkpointId`, which its run went past (to `headId`), says when it moves to `branch`. */
export function olderCheckpointMessage(checkpointId: string, headId: string, branch: string): string {
  return `checkpoint ${checkpointId} is not the latest of its run (${headId} is); continuing on a new branch, ${branch}, so nothing of that run is overwritten`;
}
