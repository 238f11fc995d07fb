import type { CheckpointMetadata } from '../document.js';
import { stateError } from '../errors.js';
import { isValidBranchName, isValidCheckpointId, newLineageId } from '../ids.js';
import type { CheckpointProvider } from '../provider.js';
import type { LineagePositions } from './lineage-positions.js';

export interface Lineage {
  /** Groups the checkpoints of one run and its resumptions; a fork gets a new one. */
  lineageId: string;
  /**
   * The run's last checkpoint, written (to any location) or restored. The parent of the next write
   * to a location is the run's last checkpoint in that location (or, before its first write there,
   * the checkpoint the run was restored from): a run writing to two locations keeps a chain in each.
   */
  checkpointId: string | null;
  /** Parent of `checkpointId`. */
  parentId: string | null;
  branch: string;
}

/**
 * The lineage a run starts with (`RuntimeStateOptions.lineage`): what is not given is a new run's
 * (`main`, a new lineage id, no checkpoint yet). Refuses a branch name or lineage id that is not
 * allowed.
 */
export function startingLineage(lineage: Partial<Lineage> | undefined): Lineage {
  const branch = lineage?.branch ?? 'main';
  if (!isValidBranchName(branch)) throw stateError('invalid_name', `branch name "${branch}" is not allowed`);
  const lineageId = lineage?.lineageId ?? newLineageId();
  if (!isValidCheckpointId(lineageId))
    throw stateError(
      'invalid_name',
      `lineage id ${JSON.stringify(lineageId)} is not allowed; use letters, digits, "_", "." and "-"`,
    );
  return {
    lineageId,
    checkpointId: lineage?.checkpointId ?? null,
    parentId: lineage?.parentId ?? null,
    branch,
  };
}

/**
 * Makes the checkpoint `metadata` describes, taken for a write to `location` of `provider`, the
 * run's last one: in `lineage`, and in `positions` as the parent of the next write there. Returns
 * the undo for when that write fails: `lineage` goes back to where it stood unless a later write
 * moved it on meanwhile (see {@link LineagePositions.advance} for the position).
 */
export function advanceLineage(
  lineage: Lineage,
  positions: LineagePositions,
  provider: CheckpointProvider,
  location: string,
  metadata: CheckpointMetadata,
): () => void {
  const previous = { checkpointId: lineage.checkpointId, parentId: lineage.parentId };
  // Claim the lineage position in this location now, so that a second write to it started before
  // this one finishes names this one as its parent. Undone if the write fails.
  const undoPosition = positions.advance(provider, location, {
    checkpointId: metadata.id,
    eventCount: metadata.eventCount,
  });
  lineage.parentId = metadata.parentId;
  lineage.checkpointId = metadata.id;
  return () => {
    undoPosition();
    if (lineage.checkpointId === metadata.id) {
      lineage.checkpointId = previous.checkpointId;
      lineage.parentId = previous.parentId;
    }
  };
}
