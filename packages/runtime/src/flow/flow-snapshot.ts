import type {
  CheckpointConfigInput,
  EntitySnapshot,
  JsonValue,
  LoadedCheckpoint,
} from '@crewline/runtime-state';
import { restoreCheckpointSetting } from '../checkpointing/checkpoint-setting.js';
import { flowError } from './errors.js';
import type { Flow, FlowConstructor, FlowOptions } from './flow.js';
import { flowNameOf } from './flow-name.js';
import { registeredFlowName } from './flow-registry.js';

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
 * The options a restored flow is built with. Its checkpoint setting, unless the caller gives one, is
 * the one saved in the checkpoint, with the provider it was read through when the kinds match (so a
 * custom or in-memory provider keeps working), overridden by any `location`, `onEvents`,
 * `maxCheckpoints` or `provider` passed next to `restoreFrom`.
 */
export async function restoredOptions(
  flowClass: FlowConstructor,
  loaded: LoadedCheckpoint,
  config: CheckpointConfigInput,
  options: FlowOptions<any>,
): Promise<FlowOptions<any>> {
  if (options.checkpoint !== undefined) return options;
  const name = options.name ?? flowNameOf(flowClass);
  const flows = loaded.document.entities.filter((entity) => entity.kind === 'flow');
  const snapshot = flows.find((entity) => entity.name === name || entity.registryName === name) ?? flows[0];
  const stored = (snapshot?.data as { checkpoint?: JsonValue } | undefined)?.checkpoint;
  const base = await restoreCheckpointSetting(stored);
  const overrides: { -readonly [K in keyof CheckpointConfigInput]: CheckpointConfigInput[K] } = {};
  if (config.location !== undefined) overrides.location = config.location;
  if (config.onEvents !== undefined) overrides.onEvents = config.onEvents;
  if (config.maxCheckpoints !== undefined) overrides.maxCheckpoints = config.maxCheckpoints;
  if (config.provider !== undefined) overrides.provider = config.provider;
  if (base === undefined || base === false) {
    return { ...options, checkpoint: Object.keys(overrides).length > 0 ? overrides : base };
  }
  const setting: { -readonly [K in keyof CheckpointConfigInput]: CheckpointConfigInput[K] } =
    base === true ? {} : { ...base };
  const storedKind =
    stored !== null &&
    typeof stored === 'object' &&
    !Array.isArray(stored) &&
    typeof stored.providerKind === 'string'
      ? stored.providerKind
      : 'json';
  if (storedKind === loaded.provider.kind) setting.provider = loaded.provider;
  return { ...options, checkpoint: { ...setting, ...overrides } };
}
