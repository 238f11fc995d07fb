import {
  isValidBranchName,
  isValidCheckpointId,
  type ListQuery,
  type PruneOptions,
  pruneOptionsProblem,
} from '@crewline/runtime-state';
import { sqliteError } from './errors.js';

/** Refuses a list query with a branch name or lineage id that cannot be stored. */
export function checkQuery(query: ListQuery | undefined): void {
  if (query?.branch !== undefined && (typeof query.branch !== 'string' || !isValidBranchName(query.branch))) {
    throw sqliteError('invalid_name', `branch name ${JSON.stringify(query.branch)} is not allowed`);
  }
  if (query?.lineageId !== undefined && typeof query.lineageId !== 'string') {
    throw sqliteError('invalid_argument', 'lineageId must be a string');
  }
}

/** Refuses what is not a checkpoint id. */
export function checkId(id: string): void {
  if (typeof id !== 'string' || !isValidCheckpointId(id)) {
    throw sqliteError('invalid_name', `checkpoint id ${JSON.stringify(id)} is not a checkpoint id`);
  }
}

/** Refuses a `keep` below 1 (or not whole), an invalid `olderThan` or branch. */
export function checkPruneOptions(options: PruneOptions): void {
  const problem = pruneOptionsProblem(options);
  if (problem !== undefined) throw sqliteError('invalid_argument', problem);
  if (options.branch !== undefined) checkQuery({ branch: options.branch });
}
