import type {
  CheckpointSetting,
  EncodedValue,
  EntitySnapshot,
  EntitySummary,
  LoadedCheckpoint,
  ValueCodec,
} from '@crewline/runtime-state';
import { toFlowData } from '@crewline/runtime-state/internal';
import { settledCheckpointSetting } from '../checkpointing/checkpoint-setting.js';
import type { Settle } from '../checkpointing/snapshot-values.js';
import { type FlowClass, type ProjectRegistry, projectRegistry } from '../project-config/project-config.js';
import { findEntitySnapshot } from '../restore/find-entity-snapshot.js';
import { flowError } from './errors.js';
import { flowGraph } from './flow-graph.js';
import { flowNameOf } from './flow-name.js';
import { registeredFlowName } from './flow-registry.js';
import { executionToJson, type FlowExecution, type StoredValues } from './run-progress.js';

/**
 * The flow class a checkpoint's flow is registered under (`crewline.config.ts` `flows: { name: Class }`),
 * matched by registered name, then by flow name. A checkpoint never names a module path, so an
 * unregistered flow cannot be rebuilt: the error says what to register.
 */
export function registeredClassFor(
  loaded: LoadedCheckpoint,
  name?: string,
  registry: ProjectRegistry = projectRegistry(),
): FlowClass {
  const snapshot = findEntitySnapshot(loaded, {
    kind: 'flow',
    ...(name !== undefined ? { names: [name] } : {}),
  });
  const flowClass = findRegisteredFlow(snapshot, registry);
  if (flowClass) return flowClass;
  const key = snapshot.registryName ?? snapshot.name;
  throw flowError(
    'not_rebuildable',
    `checkpoint ${loaded.checkpoint.id} holds flow "${snapshot.name}", whose class is not registered in this process; add it to crewline.config.ts: export default defineConfig({ flows: { '${key}': ${/^[A-Za-z_$][\w$]*$/.test(snapshot.name) ? snapshot.name : 'YourFlowClass'} } })`,
    { details: { flowName: snapshot.name, registryName: key } },
  );
}

function findRegisteredFlow(snapshot: EntitySnapshot, registry: ProjectRegistry): FlowClass | undefined {
  for (const key of [snapshot.registryName, snapshot.name]) {
    if (key === undefined) continue;
    const found = registry.flow(key);
    if (found) return found;
  }
  for (const candidate of registry.flows.values()) {
    if (flowNameOf(candidate) === snapshot.name) return candidate;
  }
  return undefined;
}

/** A flow's ids: in its run (see `FlowEngine.entityId`), and of its state. */
export interface FlowIds {
  readonly entityId: string;
  readonly stateId: string;
}

/** The flow's entity in a checkpoint: state (as of the last completed method), progress and settings. */
export function flowSnapshot(
  flow: { readonly flowName: string; readonly checkpoint: CheckpointSetting },
  execution: FlowExecution,
  ids: FlowIds,
  parts: {
    state: EncodedValue;
    maxMethodCalls: number;
    codec: ValueCodec;
    stored?: StoredValues;
    /** Settles the flow's checkpoint setting in the run (see `settledCheckpointSetting`). */
    settle: Settle;
  },
): EntitySnapshot {
  const flowClass = flow.constructor as FlowClass;
  return {
    kind: 'flow',
    id: ids.entityId,
    name: flow.flowName,
    registryName: registeredFlowName(flowClass) ?? flow.flowName,
    data: toFlowData({
      stateId: ids.stateId,
      flowName: flow.flowName,
      state: parts.state,
      execution: executionToJson(execution, parts.codec, parts.stored),
      checkpoint: settledCheckpointSetting(flow.checkpoint, parts.settle),
      maxMethodCalls: parts.maxMethodCalls,
      persisted: flowGraph(flowClass, flow.flowName).persisted,
    }),
  };
}

/** The flow's line in a checkpoint's listing: its id in the run, status and how many methods completed. */
export function flowSummary(
  flow: { readonly flowName: string },
  execution: FlowExecution,
  ids: FlowIds,
): EntitySummary {
  return {
    kind: 'flow',
    id: ids.entityId,
    name: flow.flowName,
    status: execution.status,
    completed: execution.completedMethods.length,
    total: flowGraph(flow.constructor as FlowClass, flow.flowName).nodes.size,
  };
}

/** The names a flow's snapshot may carry: its flow name, and the name its class is registered under. */
export function flowSnapshotNames(flowClass: FlowClass, flowName: string): string[] {
  const registered = registeredFlowName(flowClass);
  return registered !== undefined && registered !== flowName ? [flowName, registered] : [flowName];
}
