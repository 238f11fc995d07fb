import { CrewlineError, logger } from '@crewline/events';
import {
  type CheckpointProvider,
  isValidBranchName,
  type LoadedCheckpoint,
  newForkBranchName,
} from '@crewline/runtime-state';

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
 * Warns when a resume (not a fork) starts from a checkpoint that is no longer the newest of its
 * branch: the resumed run writes a second chain on the branch beside the later checkpoints, and
 * `maxCheckpoints` may prune those. Forking keeps the two apart. Best-effort: never throws.
 */
export async function warnIfResumingOlderCheckpoint(
  provider: CheckpointProvider,
  location: string,
  loaded: LoadedCheckpoint,
): Promise<void> {
  // A store with leases answers this itself when the run claims its head (it moves to a new branch).
  if (typeof provider.claimLease === 'function') return;
  const { id, branch } = loaded.document.metadata;
  try {
    const where = provider.resolveLocation(location);
    const latest = await provider.latest(where, { branch });
    if (latest === undefined || latest.id === id) return;
    logger.warn(
      'runtime',
      `resuming ${id}, which is not the newest checkpoint of branch "${branch}" (newest: ${latest.id}); the new checkpoints continue "${branch}" beside the later ones — fork instead (Crew.fork, crewline checkpoint fork) to keep them apart`,
    );
  } catch {
    // Only a hint: a location that cannot be listed is reported by the write that follows, if at all.
  }
}
