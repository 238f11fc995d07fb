import { CrewlineError } from '@crewline/events';
import { leaseHeldAdvice, leaseHeldMessage } from '@crewline/runtime-state/internal';
import { flowError } from './errors.js';

/**
 * The refusal of a kickoff of a persisted state by its id when another process runs that state (it
 * holds the head of the state's lineage) or ran it while this kickoff looked for its latest save,
 * said in terms of the state: the store names a lineage id nobody gave, and its advice (claim the
 * head, `onConflict`) is for a run continued from a checkpoint. Any other error is returned as it is.
 * `nested`: the refused kickoff was made in another flow's method (see `claimNestedState`), whose
 * run continues what it saved, not the state's latest save: the advice is to run it again.
 */
export function stateClaimRefused(
  flowName: string,
  stateId: string,
  error: unknown,
  options: { nested?: boolean } = {},
): unknown {
  if (!CrewlineError.hasCode(error, 'conflict')) return error;
  const details = error.details ?? {};
  const again = options.nested
    ? `kick off state "${stateId}" again`
    : `kick off state "${stateId}" again to continue from its latest save`;
  const refusal = { cause: error, details: { ...details, flowName, stateId } };
  const { lineageId, holder, expiresInMs, headId, holderNotRunningHere, holderPid } = details;
  if (typeof lineageId === 'string' && typeof holder === 'string' && typeof expiresInMs === 'number') {
    const advice = leaseHeldAdvice(
      `${flowName}.fork({ restoreFrom }) of its latest save, under a new state id`,
      details.holderRunsHere === true,
      `, then ${again}`,
      // provider-postgres found no process with the holder's pid here: waiting for it to end waits
      // for nothing, its lease runs out.
      holderNotRunningHere === true && typeof holderPid === 'number' ? holderPid : undefined,
    );
    return flowError(
      'conflict',
      `flow "${flowName}": ${leaseHeldMessage(lineageId, holder, expiresInMs, advice, `(state "${stateId}")`)}`,
      refusal,
    );
  }
  if (typeof headId === 'string' && options.nested) {
    return flowError(
      'conflict',
      `flow "${flowName}": state "${stateId}" was continued by another kickoff while this one claimed it (its latest save is now ${headId}); nothing was run: ${again}`,
      refusal,
    );
  }
  if (typeof headId === 'string') {
    return flowError(
      'conflict',
      `flow "${flowName}": state "${stateId}" was run by another process while this kickoff looked for its latest save (its latest is now ${headId}); nothing was run: ${again}`,
      refusal,
    );
  }
  return error;
}
