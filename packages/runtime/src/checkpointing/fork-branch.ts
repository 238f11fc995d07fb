import { CrewlineError } from '@crewline/events';
import { isValidBranchName, type LoadedCheckpoint, newForkBranchName } from '@crewline/runtime-state';

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
