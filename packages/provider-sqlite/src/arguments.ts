import {
  isValidBranchName,
  isValidCheckpointId,
  type LeaseRequest,
  type LeaseToken,
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

/** Longest lease, in milliseconds: the longest delay a renewal timer can wait (about 24.8 days). */
const longestLeaseMs = 2_147_483_647;

function checkText(value: unknown, name: string, longest: number): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > longest) {
    throw sqliteError('invalid_argument', `lease ${name} must be a string of 1 to ${longest} characters`);
  }
}

/** Refuses a lease token without a lineage id or owner of a size the `leases` table stores. */
export function checkLeaseToken(token: LeaseToken): void {
  if (token === null || typeof token !== 'object') {
    throw sqliteError('invalid_argument', 'a lease token must be an object { lineageId, owner }');
  }
  checkText(token.lineageId, 'lineageId', 200);
  checkText(token.owner, 'owner', 200);
}

/** Refuses a lease duration that is not a whole number of milliseconds from 1 to about 24.8 days. */
export function checkLeaseDuration(ttlMs: number): void {
  if (!Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > longestLeaseMs) {
    throw sqliteError(
      'invalid_argument',
      `lease ttlMs ${String(ttlMs)} is not allowed; pass a whole number of milliseconds from 1 to ${longestLeaseMs}`,
    );
  }
}

/** Refuses a claim whose token, holder, checkpoint id or duration is not usable. */
export function checkLeaseRequest(request: LeaseRequest): void {
  checkLeaseToken(request);
  checkText(request.holder, 'holder', 500);
  if (request.checkpointId !== null) checkId(request.checkpointId);
  checkLeaseDuration(request.ttlMs);
}
