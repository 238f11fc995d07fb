import { CrewlineError } from '@crewline/events';
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
    `branch "${branch}" already exists in ${where}; choose another name with --branch or omit it to generate one`,
    { details: { branch, location: where } },
  );
}
