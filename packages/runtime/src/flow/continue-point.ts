import type { EventBus } from '@crewline/events';
import type { CheckpointConfigInput, CheckpointSetting, LoadedCheckpoint } from '@crewline/runtime-state';
import { resolveCheckpointChain } from '../checkpointing/checkpoint-setting.js';
import type { FlowClass } from '../project-config/project-config.js';
import { loadRestoreTarget } from '../restore/load-restore-target.js';
import { flowError } from './errors.js';
import { flowGraph } from './flow-graph.js';
import { newStateId } from './flow-state.js';
import { loadStateCheckpoint, persistTarget, stateBranch, storageTarget } from './flow-storage.js';
import type { ResumeTarget } from './flow-types.js';
import { findRerunPoint } from './list-flow-states.js';

const kickoffKeys = new Set(['inputs', 'fromCheckpoint', 'rerunFrom', 'abortSignal']);

/** Refuses an option `kickoff()` does not know (answers go to `Flow.resume`, not to kickoff). */
export function checkKickoffOptions(options: object): void {
  for (const key of Object.keys(options)) {
    if (!kickoffKeys.has(key)) {
      throw flowError(
        'invalid_argument',
        `kickoff(): unknown option "${key}"; use inputs, fromCheckpoint, rerunFrom or abortSignal (answers go to Flow.resume)`,
      );
    }
  }
}

/**
 * Where `Flow.fork` continues: under a new state id, on `branch` when given, else (a persisted flow)
 * on the branch of that id, else on a generated one.
 */
export function flowFork(
  flowClass: FlowClass,
  flowName: string,
  branch: string | undefined,
): { stateId: string; branch: string | undefined } {
  const stateId = newStateId();
  return {
    stateId,
    branch: branch ?? (flowGraph(flowClass, flowName).persisted ? stateBranch(stateId) : undefined),
  };
}

/** What finding where a flow continues needs of it: its class, name and checkpoint setting. */
export interface ContinuingFlow {
  readonly constructor: unknown;
  readonly flowName: string;
  readonly checkpoint: CheckpointSetting;
}

function graphOf(flow: ContinuingFlow) {
  return flowGraph(flow.constructor as FlowClass, flow.flowName);
}

/**
 * The checkpoint `Flow.resume(from, answer)` continues: a reference, or a persisted state's latest
 * save looked up by id where the flow persists (or at `from.location`). `probe` makes an instance of
 * the flow class, only when the lookup needs one (constructing a flow emits an event).
 */
export async function loadResumeTarget(
  from: ResumeTarget,
  probe: () => ContinuingFlow,
  bus: EventBus | undefined,
): Promise<LoadedCheckpoint> {
  if (typeof from === 'string') return loadRestoreTarget(from, bus ? { bus } : {});
  if ('restoreFrom' in from) {
    return loadRestoreTarget(from.restoreFrom, {
      ...(bus ? { bus } : {}),
      ...(from.provider ? { provider: from.provider } : {}),
    });
  }
  const flow = probe();
  const graph = graphOf(flow);
  const target =
    from.location !== undefined || from.provider !== undefined
      ? await storageTarget(
          from.location ?? graph.persistOptions?.location,
          from.provider ?? graph.persistOptions?.provider,
        )
      : await persistTarget(graph, resolveCheckpointChain([flow.checkpoint]));
  const loaded = await loadStateCheckpoint(target, flow.flowName, from.id, bus);
  if (!loaded) {
    throw flowError(
      'not_found',
      `no saved state "${from.id}" of flow "${flow.flowName}" in ${target.location}; check the id with ${flow.flowName}.listStates()`,
    );
  }
  return loaded;
}

/** The checkpoint `kickoff({ rerunFrom })` continues from: the state's save before that method. */
export async function rerunCheckpoint(
  flow: ContinuingFlow,
  request: {
    method: string;
    inputs: Record<string, unknown>;
    fromCheckpoint: CheckpointConfigInput | undefined;
    /** An `id` written into the flow's initial state, used when `inputs.id` is not given. */
    declaredStateId: string | undefined;
  },
): Promise<CheckpointConfigInput> {
  const { method, inputs } = request;
  const graph = graphOf(flow);
  if (typeof method !== 'string' || !graph.nodes.has(method)) {
    throw flowError(
      'invalid_argument',
      `kickoff(): rerunFrom ${JSON.stringify(method)} is not a method of flow "${flow.flowName}"; its methods are ${[...graph.nodes.keys()].join(', ')}`,
    );
  }
  if (request.fromCheckpoint !== undefined) {
    throw flowError(
      'invalid_argument',
      'kickoff(): give rerunFrom or fromCheckpoint, not both; rerunFrom picks the checkpoint itself and keeps saving where the flow saves',
    );
  }
  const id = typeof inputs.id === 'string' ? inputs.id : request.declaredStateId;
  if (id === undefined) {
    throw flowError(
      'invalid_argument',
      `kickoff(): rerunFrom needs the state to re-run: pass inputs.id (ids are listed by ${flow.flowName}.listStates())`,
    );
  }
  const config = resolveCheckpointChain([flow.checkpoint]);
  // Such a flow saves nothing: "no saves of flow state" in the default location would send the user
  // looking for an id, not for the missing decorator.
  if (graph.persistOptions === undefined && config === undefined) {
    throw flowError(
      'invalid_argument',
      `kickoff(): rerunFrom re-runs from the saves of a flow's state, and flow "${flow.flowName}" saves none: add @persist() to the class (or to the methods to save after), or give it a checkpoint config`,
    );
  }
  const target = await persistTarget(graph, config);
  const point = await findRerunPoint(target.location, id, method, {
    provider: target.provider,
    flowName: flow.flowName,
  });
  return { restoreFrom: point.reference, provider: target.provider };
}
