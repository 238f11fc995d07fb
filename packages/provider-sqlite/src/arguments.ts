import {
  isValidBranchName,
  isValidCheckpointId,
  type ListQuery,
  type PruneOptions,
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
  if (options.keep !== undefined && (!Number.isInteger(options.keep) || options.keep < 1)) {
    throw sqliteError(
      'invalid_argument',
      `prune keep must be a whole number of at least 1 (each branch keeps its latest checkpoint), not ${String(options.keep)}`,
    );
  }
  if (
    options.olderThan !== undefined &&
    (!(options.olderThan instanceof Date) || Number.isNaN(options.olderThan.getTime()))
  ) {
    throw sqliteError('invalid_argument', 'prune olderThan must be a valid Date');
  }
  if (options.branch !== undefined) checkQuery({ branch: options.branch });
}
