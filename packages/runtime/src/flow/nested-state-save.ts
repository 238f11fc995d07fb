import { type CrewlineError, REDACTED } from '@crewline/events';
import type { EntitySnapshot } from '@crewline/runtime-state';
import { parseFlowData } from '@crewline/runtime-state/internal';
import { flowError } from './errors.js';
import {
  continuesFork,
  findStateCheckpoint,
  readStateSave,
  type StorageTarget,
  stateKickoffs,
} from './flow-storage.js';
import { redactedStatePaths } from './redacted-state.js';

/** Where a nested kickoff is made: the flow whose method kicks it off, and that method. */
export interface NestedKickoffPlace {
  /** The outer flow's name (undefined when the kickoff is made outside a flow's method, e.g. a crew's tool). */
  flowName: string | undefined;
  /** The outer flow's method that kicks it off. */
  method: string | undefined;
}

export interface NestedStateSaveRequest {
  /** The store the state is saved to. */
  target: StorageTarget;
  flowName: string;
  stateId: string;
  /** The kickoff's inputs other than `id`: fields they give are no `[REDACTED]` left to read. */
  inputs: Readonly<Record<string, unknown>>;
  /** Where it is kicked off, for the refusal's advice. */
  kickedOffIn: NestedKickoffPlace;
}

/**
 * The snapshot a `@persist()` state kicked off by its id in another flow's method, in a new run of
 * that flow, continues: the state's latest save, as a root kickoff by the id continues it (SPEC §6:
 * what it completed is not run, nor paid for, again); `undefined` when the state has none (it starts).
 * Called with the state's claim held (see `claimStateLineage`), so no other kickoff runs the state
 * until this one ends and nothing found here can go stale: one listing of the store, as for a root
 * kickoff by the id, and one read of the checkpoint found. A save on a fork's branch is not continued
 * (a fork claims nothing, so continuing its child's save would run beside it).
 *
 * Refused, before anything runs, when the save holds `[REDACTED]` where the state had a credential
 * and a method is left to run (a finished state runs nothing) that the kickoff's inputs do not give:
 * the method would read that text as the value.
 */
export async function nestedStateSave(request: NestedStateSaveRequest): Promise<EntitySnapshot | undefined> {
  const { target, flowName, stateId } = request;
  const found = await findStateCheckpoint(
    target,
    flowName,
    stateId,
    (checkpoint) => !continuesFork(checkpoint),
  );
  if (found === undefined) return undefined;
  const document = await readStateSave(target, found);
  const snapshot = stateKickoffs(document.entities, flowName, stateId).at(-1);
  if (snapshot === undefined) return undefined;
  const { execution } = parseFlowData(snapshot);
  const finished = execution.status === 'completed' && execution.pending.length === 0;
  const paths = finished ? [] : redactedStatePaths(execution.committedState, request.inputs);
  if (paths.length > 0) throw nestedRedactedStateError({ ...request, checkpointId: found.id, paths });
  return snapshot;
}

/**
 * The refusal of a nested kickoff by id whose state's latest save holds `[REDACTED]` fields a method
 * left to run may read: the value can only come from the outer flow's method that kicks the state off
 * (its kickoff inputs), or the state starts afresh under a new id. `details` as for every refusal of a
 * redacted state (`redactedState`, `inputs`), with the state and where it is kicked off.
 */
function nestedRedactedStateError(
  refusal: NestedStateSaveRequest & { checkpointId: string; paths: readonly string[] },
): CrewlineError {
  const { flowName, stateId, paths, kickedOffIn } = refusal;
  const inputs = [...new Set(paths.map(topField))];
  const one = paths.length === 1;
  const it = one ? 'it' : 'them';
  const named = `state ${one ? 'field' : 'fields'} ${paths.map((path) => `"${path}"`).join(', ')}`;
  const where =
    kickedOffIn.method === undefined
      ? 'the method that kicks it off'
      : `method "${kickedOffIn.method}"${kickedOffIn.flowName === undefined ? '' : ` of flow "${kickedOffIn.flowName}"`}`;
  const given = inputs.map((input) => `${input}: …`).join(', ');
  // An input replaces a whole top-level field: a nested one comes with the field that holds it.
  const whole = inputs.some((input) => !paths.includes(input))
    ? ' (an input replaces a whole top-level field: give it with every field it holds)'
    : '';
  return flowError(
    'invalid_argument',
    `flow "${flowName}": state "${stateId}", kicked off by its id in ${where}, continues its latest save (checkpoint ${refusal.checkpointId}), which holds ${named} as ${REDACTED}, and a method left to run may read ${it}; nothing was run. Give ${it} in that kickoff's inputs in ${where}${whole}: kickoff({ inputs: { id: ${JSON.stringify(stateId)}, ${given} } }), or kick it off under a new id to start the state afresh`,
    {
      details: {
        redactedState: [...paths],
        inputs,
        flowName,
        stateId,
        checkpointId: refusal.checkpointId,
        ...(kickedOffIn.method === undefined ? {} : { kickedOffIn: { ...kickedOffIn } }),
      },
    },
  );
}

/** The top-level state field a path is in: what an input replaces (`database` for `database.password`). */
function topField(path: string): string {
  const end = path.search(/[.[]/);
  return end < 0 ? path : path.slice(0, end);
}
