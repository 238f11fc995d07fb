import { CrewlineError } from '@crewline/events';
import { isValidBranchName, isValidCheckpointId } from '../ids.js';
import type { LeaseRequest, LeaseToken, ListQuery, PruneOptions } from '../provider.js';
import { pruneOptionsProblem } from '../prune-plan.js';

// The checks of what a caller passes to a provider's methods; each error names `component` (the
// provider, `provider-sqlite`...), so that every provider refuses the same input with the same words.

/** Refuses a list query with a branch name or lineage id that cannot be stored. */
export function checkQuery(component: string, query: ListQuery | undefined): void {
  if (query?.branch !== undefined && (typeof query.branch !== 'string' || !isValidBranchName(query.branch))) {
    throw new CrewlineError(
      component,
      'invalid_name',
      `branch name ${JSON.stringify(query.branch)} is not allowed`,
    );
  }
  if (query?.lineageId !== undefined && typeof query.lineageId !== 'string') {
    throw new CrewlineError(component, 'invalid_argument', 'lineageId must be a string');
  }
}

/** Refuses what is not a checkpoint id. */
export function checkId(component: string, id: string): void {
  if (typeof id !== 'string' || !isValidCheckpointId(id)) {
    throw new CrewlineError(
      component,
      'invalid_name',
      `checkpoint id ${JSON.stringify(id)} is not a checkpoint id`,
    );
  }
}

/** Refuses a `keep` below 1 (or not whole), an invalid `olderThan` or branch. */
export function checkPruneOptions(component: string, options: PruneOptions): void {
  const problem = pruneOptionsProblem(options);
  if (problem !== undefined) throw new CrewlineError(component, 'invalid_argument', problem);
  if (options.branch !== undefined) checkQuery(component, { branch: options.branch });
}

/** Longest lease, in milliseconds: the longest delay a renewal timer can wait (about 24.8 days). */
const longestLeaseMs = 2_147_483_647;

function checkText(component: string, value: unknown, name: string, longest: number): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > longest) {
    throw new CrewlineError(
      component,
      'invalid_argument',
      `lease ${name} must be a string of 1 to ${longest} characters`,
    );
  }
}

/** Refuses a lease token without a lineage id or owner of a size a lease row stores (200 characters). */
export function checkLeaseToken(component: string, token: LeaseToken): void {
  if (token === null || typeof token !== 'object') {
    throw new CrewlineError(
      component,
      'invalid_argument',
      'a lease token must be an object { lineageId, owner }',
    );
  }
  checkText(component, token.lineageId, 'lineageId', 200);
  checkText(component, token.owner, 'owner', 200);
}

/** Refuses a lease duration that is not a whole number of milliseconds from 1 to about 24.8 days. */
export function checkLeaseDuration(component: string, ttlMs: number): void {
  if (!Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > longestLeaseMs) {
    throw new CrewlineError(
      component,
      'invalid_argument',
      `lease ttlMs ${String(ttlMs)} is not allowed; pass a whole number of milliseconds from 1 to ${longestLeaseMs}`,
    );
  }
}

/** Refuses a claim whose token, holder, checkpoint id or duration is not usable. */
export function checkLeaseRequest(component: string, request: LeaseRequest): void {
  checkLeaseToken(component, request);
  checkText(component, request.holder, 'holder', 500);
  if (request.checkpointId !== null) checkId(component, request.checkpointId);
  checkLeaseDuration(component, request.ttlMs);
}
