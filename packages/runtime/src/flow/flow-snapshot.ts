import type {
  CheckpointConfigInput,
  CheckpointSetting,
  EncodedValue,
  EntitySnapshot,
  JsonValue,
  LoadedCheckpoint,
} from '@crewline/runtime-state';
import { toFlowData } from '@crewline/runtime-state/internal';
import { restoreCheckpointSetting, storeCheckpointSetting } from '../checkpointing/checkpoint-setting.js';
import { resumeCheckpointInput } from '../checkpointing/from-checkpoint.js';
import { type ProjectRegistry, projectRegistry } from '../registry/project-config.js';
import { flowError } from './errors.js';
import type { Flow } from './flow.js';
import { executionToJson, type FlowExecution } from './flow-execution.js';
import { flowGraph } from './flow-graph.js';
import { flowNameOf } from './flow-name.js';
import { registeredFlowName } from './flow-registry.js';
import type { FlowConstructor, FlowOptions } from './flow-types.js';

/** The snapshot of `flow` inside a loaded checkpoint (matched by name or registered name). */
export function findFlowSnapshot(loaded: LoadedCheckpoint, flow: Flow<any>): EntitySnapshot {
  const flows = loaded.document.entities.filter((entity) => entity.kind === 'flow');
  const names = new Set(
    [flow.flowName, registeredFlowName(flow.constructor as FlowConstructor)].filter(Boolean),
  );
  const match = flows.find(
    (entity) =>
      names.has(entity.name) || (entity.registryName !== undefined && names.has(entity.registryName)),
  );
  if (match) return match;
  const found = flows.map((entity) => `"${entity.name}"`).join(', ');
  throw flowError(
    'invalid_argument',
    flows.length === 0
      ? `checkpoint ${loaded.checkpoint.id} holds no flow; restore it with Crew.fromCheckpoint or Agent.fromCheckpoint`
      : `checkpoint ${loaded.checkpoint.id} holds flow ${found}, not "${flow.flowName}"; restore it with that flow class (or register it in crewline.config.ts)`,
  );
}

/** `config.restoreFrom`, or an error naming the call that needs it. */
export function requireReference(config: CheckpointConfigInput, call: string): string {
  if (
    config === null ||
    typeof config !== 'object' ||
    typeof config.restoreFrom !== 'string' ||
    config.restoreFrom.length === 0
  ) {
    throw flowError(
      'invalid_argument',
      `${call}(config) needs config.restoreFrom: a checkpoint file, directory, db#id or postgres-url#id`,
    );
  }
  return config.restoreFrom;
}

/**
 * The options a restored flow is built with. Unless the caller gives a `checkpoint` setting, a flow
 * that checkpointed keeps checkpointing where it was read from (same location and provider, its own
 * `onEvents`), like a restored crew, with anything given next to `restoreFrom` winning. A flow that
 * did not checkpoint (persisted only) stays that way unless `config` asks for checkpointing.
 */
export async function restoredOptions(
  flowClass: FlowConstructor,
  loaded: LoadedCheckpoint,
  config: CheckpointConfigInput,
  options: FlowOptions<any>,
): Promise<FlowOptions<any>> {
  if (options.checkpoint !== undefined) return options;
  return {
    ...options,
    checkpoint: await restoredSetting(options.name ?? flowNameOf(flowClass), loaded, config, undefined),
  };
}

/**
 * The checkpoint setting of a flow continuing `loaded`: off when its own setting is `false`; off
 * when neither it, the saved run nor `config` asked for checkpointing; otherwise, as for a crew, the
 * location and provider it was read from with its own (else the saved) `onEvents`/`maxCheckpoints`,
 * and whatever `config` gives next to `restoreFrom` winning.
 */
export async function restoredSetting(
  flowName: string,
  loaded: LoadedCheckpoint,
  config: CheckpointConfigInput,
  own: CheckpointSetting,
): Promise<CheckpointSetting> {
  if (own === false) return false;
  const flows = loaded.document.entities.filter((entity) => entity.kind === 'flow');
  const snapshot =
    flows.find((entity) => entity.name === flowName || entity.registryName === flowName) ?? flows[0];
  const saved = await restoreCheckpointSetting(
    (snapshot?.data as { checkpoint?: JsonValue } | undefined)?.checkpoint,
    loaded.providers,
  );
  const { restoreFrom: _restoreFrom, ...explicit } = config;
  if (own === undefined && (saved === undefined || saved === false) && Object.keys(explicit).length === 0)
    return saved;
  return resumeCheckpointInput(own, config, loaded, saved);
}

/**
 * The flow class a checkpoint's flow is registered under (`crewline.config.ts` `flows: { name: Class }`),
 * matched by registered name, then by flow name. A checkpoint never names a module path, so an
 * unregistered flow cannot be rebuilt: the error says what to register.
 */
export function registeredClassFor(
  loaded: LoadedCheckpoint,
  name?: string,
  registry: ProjectRegistry = projectRegistry(),
): FlowConstructor {
  const flows = loaded.document.entities.filter((entity) => entity.kind === 'flow');
  const snapshot = flows.find(
    (entity) => name === undefined || entity.name === name || entity.registryName === name,
  );
  if (!snapshot) {
    throw flowError(
      'not_found',
      `checkpoint ${loaded.checkpoint.id} holds no flow${name ? ` named "${name}"` : ''}`,
    );
  }
  const flowClass = findRegisteredFlow(snapshot, registry);
  if (flowClass) return flowClass;
  const key = snapshot.registryName ?? snapshot.name;
  throw flowError(
    'not_rebuildable',
    `checkpoint ${loaded.checkpoint.id} holds flow "${snapshot.name}", whose class is not registered in this process; add it to crewline.config.ts: export default defineConfig({ flows: { '${key}': ${/^[A-Za-z_$][\w$]*$/.test(snapshot.name) ? snapshot.name : 'YourFlowClass'} } })`,
    { details: { flowName: snapshot.name, registryName: key } },
  );
}

function findRegisteredFlow(
  snapshot: EntitySnapshot,
  registry: ProjectRegistry,
): FlowConstructor | undefined {
  for (const key of [snapshot.registryName, snapshot.name]) {
    if (key === undefined) continue;
    const found = registry.flow(key);
    if (found) return found as unknown as FlowConstructor;
  }
  for (const candidate of registry.flows.values()) {
    if (flowNameOf(candidate as unknown as FlowConstructor) === snapshot.name)
      return candidate as unknown as FlowConstructor;
  }
  return undefined;
}

/** The flow's entity in a checkpoint: state (as of the last completed method), progress and settings. */
export function flowSnapshot(
  flow: Flow<any>,
  execution: FlowExecution,
  stateId: string,
  parts: { state: EncodedValue; maxMethodCalls: number },
): EntitySnapshot {
  const flowClass = flow.constructor as FlowConstructor;
  return {
    kind: 'flow',
    id: stateId,
    name: flow.flowName,
    registryName: registeredFlowName(flowClass) ?? flow.flowName,
    data: toFlowData({
      stateId,
      flowName: flow.flowName,
      state: parts.state,
      execution: executionToJson(execution),
      checkpoint: storeCheckpointSetting(flow.checkpoint) as JsonValue,
      maxMethodCalls: parts.maxMethodCalls,
      persisted: flowGraph(flowClass, flow.flowName).persisted,
    }),
  };
}
