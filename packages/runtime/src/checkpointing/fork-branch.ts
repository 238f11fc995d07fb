import { CrewlineError } from '@crewline/events';
import {
  type CheckpointProvider,
  isValidBranchName,
  type LoadedCheckpoint,
  newForkBranchName,
} from '@crewline/runtime-state';
import { newerHeadId } from '@crewline/runtime-state/internal';

/** The branch a fork writes on: the given name (validated now), else a generated `fork/...` name. */
export function forkBranch(loaded: LoadedCheckpoint, branch: string | undefined): string {
  if (branch === undefined) return newForkBranchName(loaded.document.metadata.id);
  if (!isValidBranchName(branch)) {
    throw new CrewlineError(
      'runtime',
      'invalid_name',
      `branch name "${branch}" is not allowed; use segments of letters, digits, "_", "." and "-" separated by "/"`,
    );
  }
  return branch;
}

/**
 * Refuses a fork onto a branch that already has checkpoints where the fork writes: the fork's own
 * lineage would be mixed into another one, and pruning (`maxCheckpoints`) would remove the other
 * lineage's checkpoints, the fork's parent among them. Called before the fork writes anything.
 */
export async function assertNewForkBranch(
  provider: CheckpointProvider,
  location: string,
  branch: string,
): Promise<void> {
  const where = provider.resolveLocation(location);
  if ((await provider.latest(where, { branch })) === undefined) return;
  throw new CrewlineError(
    'runtime',
    'conflict',
    `branch "${branch}" already exists in ${where}; fork onto another branch (the \`branch\` option) or leave it out to generate one`,
    { details: { branch, location: where } },
  );
}

/**
 * The newest checkpoint of the run a resume (not a fork) continues, when that is not the restored
 * checkpoint, in a store without leases; undefined otherwise. A store with leases answers this
 * itself when the run claims its head (see claimHead in run.ts); one without would let the resume
 * write a second chain on the branch beside the later checkpoints (which `maxCheckpoints` may then
 * prune): the run moves to a new branch instead, as it does in a store with leases. Best-effort: a
 * location that cannot be listed answers undefined (the write that follows reports it, if at all).
 */
export async function newerHeadWithoutLeases(
  provider: CheckpointProvider,
  location: string,
  loaded: LoadedCheckpoint,
): Promise<string | undefined> {
  if (typeof provider.claimLease === 'function') return undefined;
  return newerHeadId(provider, provider.resolveLocation(location), loaded.document.metadata);
}
