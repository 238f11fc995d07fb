import { hostname } from 'node:os';
import { CrewlineError } from '@crewline/events';
import { flowError } from './errors.js';

/** How the refused kickoff of a persisted state was made (what to do again differs). */
export type RefusedStateKickoff =
  /** Kicked off by its state id: continues the state's latest save, or starts the state. */
  | 'by-id'
  /** Kicked off in another flow's method: starts the state (only a restored parent run continues it). */
  | 'nested'
  /** Continued from a given checkpoint (`Flow.resume(from, answer)`, `fromCheckpoint(...).kickoff()`). */
  | 'continued'
  /** Continued from the state's latest save, found by its id (`Flow.resume({ id }, answer)`). */
  | 'resumed';

export interface StateClaimRefusalOptions {
  /** Default `'by-id'`. */
  kickoff?: RefusedStateKickoff;
  /**
   * The state has a save a fork could start from (the kickoff by id found its latest save; a
   * continued kickoff has its checkpoint). Without one, or for a nested kickoff (the child's state id
   * is written in its parent's method, so a fork of the child does not help the parent), no fork is
   * offered. Default: false.
   */
  hasSave?: boolean;
}

/**
 * The refusal of a kickoff of a persisted state when another kickoff runs that state (it holds the
 * head of the state's lineage) or ran it while this kickoff looked for its latest save, said in terms
 * of the state: the store's message leads with a lineage id nobody gave (it stays in
 * `details.lineageId`), says the holder "continues" it (a nested holder started it), and its advice
 * (claim the head, `onConflict`, fork) is for a run continued from a checkpoint. A holder in this very
 * process (two kickoffs of one state at once in one program) is said to be. Any other error is
 * returned as it is. A nested kickoff is refused by the claim of `claimStateLineage`.
 */
export function stateClaimRefused(
  flowName: string,
  stateId: string,
  error: unknown,
  options: StateClaimRefusalOptions = {},
): unknown {
  if (!CrewlineError.hasCode(error, 'conflict')) return error;
  const kickoff = options.kickoff ?? 'by-id';
  const details = error.details ?? {};
  const again =
    kickoff === 'nested'
      ? `kick off state "${stateId}" again`
      : kickoff === 'continued'
        ? 'continue from that checkpoint again'
        : kickoff === 'resumed'
          ? `resume state "${stateId}" again`
          : `kick off state "${stateId}" again to continue from its latest save`;
  const fork =
    kickoff === 'nested' || options.hasSave !== true
      ? ''
      : `, or fork ${kickoff === 'continued' ? 'that checkpoint' : 'its latest save'} instead (${flowName}.fork({ restoreFrom }), under a new state id)`;
  const refusal = { cause: error, details: { ...details, flowName, stateId } };
  const { holder, expiresInMs, headId, holderNotRunningHere, holderPid } = details;
  if (typeof holder === 'string' && typeof expiresInMs === 'number') {
    const here = details.holderRunsHere === true && isThisProcess(holder);
    const wait =
      // provider-postgres found no process with the holder's pid here: waiting for it to end waits
      // for nothing, its lease runs out.
      holderNotRunningHere === true && typeof holderPid === 'number'
        ? `pid ${holderPid} on this machine is not running; its lease runs out then, not sooner (a container with the same host name may run that pid): wait for that`
        : here
          ? 'wait for that kickoff to end'
          : `wait for it to end (${details.holderRunsHere === true ? 'its process is running on this machine' : 'a holder that died stops renewing and its lease runs out'})`;
    return flowError(
      'conflict',
      `flow "${flowName}": state "${stateId}" is being run by ${holder}${here ? ' (this process)' : ''}, whose lease has ${durationText(expiresInMs)} left; ${wait}, then ${again}${fork}`,
      refusal,
    );
  }
  if (typeof headId === 'string' && kickoff === 'nested') {
    return flowError(
      'conflict',
      `flow "${flowName}": state "${stateId}" was run by another kickoff while this one claimed it (its latest save is now ${headId}); nothing was run: ${again}`,
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

/**
 * The holder a lease of this process names (`<what> on <host>, pid <pid>`, see LineageLease), told
 * only when the store also saw its process running here (its pid namespace and boot: another
 * container with the same host name and pid is another process).
 */
function isThisProcess(holder: string): boolean {
  return holder.endsWith(` on ${hostname()}, pid ${process.pid}`);
}

/** "850 ms", "12.3 s", "4 min 5 s": how long a lease has left, as the stores' refusals say it. */
function durationText(ms: number): string {
  const left = Math.max(1, Math.round(ms));
  if (left < 1000) return `${left} ms`;
  if (left < 60_000) return `${(Math.floor(left / 100) / 10).toFixed(1)} s`;
  const seconds = Math.floor(left / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}
