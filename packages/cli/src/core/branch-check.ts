import type { StoredCheckpoint } from '@crewline/runtime-state';
import { shellWord } from '@crewline/runtime-state/internal';
import { usageError } from './cli-error.js';

/**
 * A usage error (exit code 2) when no checkpoint of `listed` is on `branch`, naming the branches
 * there are: a `--branch` that names nothing in the location is a typo, for `list` as for `prune`,
 * not an empty result. `outcome` ends the message (`; nothing was removed`). Default: nothing.
 */
export function checkBranchExists(
  listed: readonly StoredCheckpoint[],
  branch: string,
  where: string,
  outcome = '',
): void {
  const branches = [...new Set(listed.map((checkpoint) => checkpoint.branch))].sort();
  if (branches.includes(branch)) return;
  const shown = branches.length > 10 ? [...branches.slice(0, 10), '...'] : branches;
  throw usageError(
    `no branch ${JSON.stringify(branch)} in ${where} (${branches.length === 0 ? 'it holds no checkpoints' : `branches: ${shown.join(', ')}`})${outcome}`,
  );
}

/**
 * A usage error (exit code 2) when no checkpoint of `listed` belongs to a run whose id starts with
 * `prefix`: a `--run` that names nothing in the location is a typo, for `list` as for `prune`.
 * `command` names the CLI as it was run (`commandName`); `outcome` ends the message (`; nothing was
 * removed`). Default: nothing.
 */
export function checkRunExists(
  listed: readonly StoredCheckpoint[],
  prefix: string,
  where: string,
  command: string,
  outcome = '',
): void {
  if (listed.some((checkpoint) => checkpoint.lineageId.startsWith(prefix))) return;
  throw usageError(
    `no run ${JSON.stringify(prefix)} in ${where} (see the RUN column of \`${command} checkpoint list ${shellWord(where)}\`)${outcome}`,
  );
}
