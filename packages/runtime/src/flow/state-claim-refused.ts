import { CrewlineError } from '@crewline/events';
import { leaseHeldAdvice, leaseHeldMessage } from '@crewline/runtime-state/internal';
import { flowError } from './errors.js';

/**
 * The refusal of a kickoff of a persisted state by its id when another process runs that state (it
 * holds the head of the state's lineage) or ran it while this kickoff looked for its latest save,
 * said in terms of the state: the store names a lineage id nobody gave, and its advice (claim the
 * head, `onConflict`) is for a run continued from a checkpoint. Any other error is returned as it is.
 */
export function stateClaimRefused(flowName: string, stateId: string, error: unknown): unknown {
  if (!CrewlineError.hasCode(error, 'conflict')) return error;
  const details = error.details ?? {};
  const again = `kick off state "${stateId}" again to continue from its latest save`;
  const options = { cause: error, details: { ...details, flowName, stateId } };
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
      options,
    );
  }
  if (typeof headId === 'string') {
    return flowError(
      'conflict',
      `flow "${flowName}": state "${stateId}" was run by another process while this kickoff looked for its latest save (its latest is now ${headId}); nothing was run: ${again}`,
      options,
    );
  }
  return error;
}
