import type { CheckpointProvider } from '@crewline/runtime-state';
import { usageError } from '../core/cli-error.js';
import { displayPath } from '../core/location.js';

/** Where a fork would write, and the branch it asks for (none: a generated one, always new). */
export interface ForkTarget {
  provider: CheckpointProvider;
  /** The location the checkpoint was read from, in the provider's canonical form. */
  location: string;
  branch: string | undefined;
  /** Directory the location is shown relative to. */
  cwd: string;
}

/**
 * Refuses a fork onto a branch that already has checkpoints, before anything is said or started:
 * left to the runtime (which refuses it as the run starts), the CLI had printed "Forking … onto
 * branch what-if" and the explorer answered 202 for a run that then failed. A usage error (exit code
 * 2, HTTP 400), as a branch name that is not allowed is. The runtime checks again when the run
 * starts, so a branch written in between is still refused there. `howToRename` completes
 * "branch X already exists in Y; …" in the words of the caller's form or flag.
 */
export async function refuseTakenBranch(target: ForkTarget, howToRename: string): Promise<void> {
  const { provider, location, branch, cwd } = target;
  if (branch === undefined) return;
  if ((await provider.latest(location, { branch })) === undefined) return;
  throw usageError(`branch "${branch}" already exists in ${displayPath(location, cwd)}; ${howToRename}`);
}
