import { CrewlineError, logger } from '@crewline/events';
import {
  type CheckpointProvider,
  type ProviderRegistry,
  readDocument,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { parseFlowData } from '@crewline/runtime-state/internal';
import { registryOf } from '../checkpointing/provider-registry.js';
import type { FlowClass } from '../project-config/project-config.js';
import { flowComponent, flowError } from './errors.js';
import { flowGraph } from './flow-graph.js';
import { flowNameOf } from './flow-name.js';
import { storageTarget } from './flow-storage.js';
import { findRerunCheckpoint } from './rerun-point.js';
import type { FlowStatus } from './run-progress.js';

/** One saved flow state, as listed by {@link listFlowStates} and `Flow.listStates()`. */
export interface FlowStateInfo {
  /** The state id: pass it as `kickoff({ inputs: { id } })` (with `@persist()`) or `Flow.resume({ id }, answer)`. */
  id: string;
  flowName: string;
  /** The method that completed last when the state was saved. */
  lastMethod: string | undefined;
  status: FlowStatus | undefined;
  /** When the latest checkpoint of this state was written (ISO time). */
  updatedAt: string;
  /** Reference of the latest checkpoint of this state (for `fromCheckpoint`, `crewline checkpoint resume`). */
  reference: string;
  /** Branch of that checkpoint (`flow-states/<id>` for persisted states). */
  branch: string;
  /** How many checkpoints hold this state. */
  checkpoints: number;
  /**
   * Whether the flow class that saved it was `@persist()` (kicked off again with this id, it
   * continues; a plain flow starts over), as its latest checkpoint says; `undefined` when that
   * checkpoint cannot be read.
   */
  persisted?: boolean;
}

export interface ListFlowStatesOptions {
  /** Provider to read with. Default: the one of the `providers` entry that claims the location. */
  provider?: CheckpointProvider;
  /** Where to find the provider for the location. Default: the built-ins (JSON, SQLite, Postgres). */
  providers?: ProviderRegistry;
  /** Only states of this flow. Default: every flow. */
  flowName?: string;
}

/**
 * Lists the flow states saved at a checkpoint location, newest first: each state id with its flow
 * name, last completed method, time and latest checkpoint. Works for states saved by `@persist()` and
 * for any checkpointed flow. The CLI calls this for `crewline checkpoint` listings of flow states.
 */
export async function listFlowStates(
  location: string,
  options: ListFlowStatesOptions = {},
): Promise<FlowStateInfo[]> {
  const { provider, resolved, all } = await listLocation(location, options);
  const latest = new Map<
    string,
    { checkpoint: StoredCheckpoint; flowName: string; status: FlowStatus | undefined; count: number }
  >();
  for (const checkpoint of all) {
    for (const entity of checkpoint.entities) {
      if (entity.kind !== 'flow') continue;
      if (options.flowName !== undefined && entity.name !== options.flowName) continue;
      const key = `${entity.name}\u0000${entity.id}`;
      const previous = latest.get(key);
      const count = (previous?.count ?? 0) + 1;
      // Lists are oldest first; compare times anyway, providers may order equal ids differently.
      if (!previous || previous.checkpoint.createdAt <= checkpoint.createdAt) {
        latest.set(key, { checkpoint, flowName: entity.name, status: entity.status, count });
      } else {
        previous.count = count;
      }
    }
  }
  const states = await Promise.all(
    [...latest.entries()].map(async ([key, entry]): Promise<FlowStateInfo> => {
      const id = key.slice(key.indexOf('\u0000') + 1);
      const execution = await readExecution(provider, resolved, entry.checkpoint, id, entry.flowName);
      return {
        id,
        flowName: entry.flowName,
        lastMethod: execution?.lastMethod,
        status: entry.status,
        updatedAt: entry.checkpoint.createdAt,
        reference: entry.checkpoint.reference,
        branch: entry.checkpoint.branch,
        checkpoints: entry.count,
        ...(execution === undefined ? {} : { persisted: execution.persisted }),
      };
    }),
  );
  return states.sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
}

/**
 * `Flow.listStates()`: the states at `options.location`, else where `flowClass` persists, else
 * `./.checkpoints`; only `flowClass`'s states when one is given (`undefined`: every flow's).
 */
export async function listStatesOf(
  flowClass: FlowClass | undefined,
  options: { location?: string; provider?: CheckpointProvider },
): Promise<FlowStateInfo[]> {
  const persistOptions = flowClass && flowGraph(flowClass, flowNameOf(flowClass)).persistOptions;
  const target = await storageTarget(
    options.location ?? persistOptions?.location,
    options.provider ?? persistOptions?.provider,
  );
  return listFlowStates(target.location, {
    provider: target.provider,
    ...(flowClass ? { flowName: flowNameOf(flowClass) } : {}),
  });
}

/** One checkpoint in the history of a flow state (see {@link listFlowStateHistory}). */
export interface FlowStateCheckpoint {
  /** Pass it as `restoreFrom` to continue from this point (`fromCheckpoint`) or branch off it (`fork`). */
  reference: string;
  checkpointId: string;
  createdAt: string;
  /** What caused the write (`method_execution_finished` for `@persist()`, `task_completed`...). */
  trigger: string;
  branch: string;
  /** The method that completed last before this checkpoint. */
  lastMethod: string | undefined;
  /** Methods completed at this point, in order of first completion. */
  completedMethods: string[];
  status: FlowStatus | undefined;
}

/**
 * Every checkpoint of one flow state, oldest first, with what had completed at each: pick the one
 * after the last step you want to keep and continue from it, so only the later steps run again.
 */
export async function listFlowStateHistory(
  location: string,
  stateId: string,
  options: ListFlowStatesOptions = {},
): Promise<FlowStateCheckpoint[]> {
  const { provider, resolved, all } = await listLocation(location, options);
  const ofState = all.filter((checkpoint) =>
    checkpoint.entities.some(
      (entity) =>
        entity.kind === 'flow' &&
        entity.id === stateId &&
        (options.flowName === undefined || entity.name === options.flowName),
    ),
  );
  return Promise.all(
    ofState.map(async (checkpoint): Promise<FlowStateCheckpoint> => {
      const execution = await readExecution(provider, resolved, checkpoint, stateId);
      return {
        reference: checkpoint.reference,
        checkpointId: checkpoint.id,
        createdAt: checkpoint.createdAt,
        trigger: checkpoint.trigger,
        branch: checkpoint.branch,
        lastMethod: execution?.lastMethod,
        completedMethods: execution?.completedMethods ?? [],
        status: checkpoint.entities.find((entity) => entity.kind === 'flow' && entity.id === stateId)?.status,
      };
    }),
  );
}

/**
 * The save to continue from so that `method` and everything after it run again, while the steps
 * before it are restored, not re-run (the rule of `findRerunCheckpoint`). Throws `not_found` when the state has no saves, and
 * `invalid_argument` when `method` never completed in them or no save precedes it.
 */
export async function findRerunPoint(
  location: string,
  stateId: string,
  method: string,
  options: ListFlowStatesOptions = {},
): Promise<FlowStateCheckpoint> {
  const history = await listFlowStateHistory(location, stateId, options);
  const which = `flow state "${stateId}"${options.flowName === undefined ? '' : ` of ${options.flowName}`}`;
  if (history.length === 0) {
    throw flowError(
      'not_found',
      `no saves of ${which} in ${location}; list the saved states with \`crewline checkpoint flows\` or Flow.listStates()`,
    );
  }
  if (!history.some((entry) => entry.completedMethods.includes(method))) {
    const completed = [...new Set(history.flatMap((entry) => entry.completedMethods))];
    throw flowError(
      'invalid_argument',
      `"${method}" never completed in ${which} (completed: ${completed.join(', ') || 'nothing'}); re-run from one of those, or resume the state to run what is still due`,
    );
  }
  const point = await findRerunCheckpoint(history, (entry) => entry.completedMethods.includes(method));
  if (!point) {
    throw flowError(
      'invalid_argument',
      `every save of ${which} already holds "${method}" completed, so none comes before it; to run it again, kick the flow off under a new id`,
    );
  }
  return point;
}

/**
 * What the flow snapshot of state `stateId` (of flow `flowName`, when given) in `checkpoint` says —
 * inside the snapshot, not in the listing metadata: its completed methods, and whether its class
 * was `@persist()`. Undefined when the checkpoint cannot be read.
 */
async function readExecution(
  provider: CheckpointProvider,
  location: string,
  checkpoint: StoredCheckpoint,
  stateId: string,
  flowName?: string,
): Promise<{ lastMethod: string | undefined; completedMethods: string[]; persisted: boolean } | undefined> {
  try {
    const document = await readDocument(provider, location, checkpoint.id);
    const snapshot = document.entities.find(
      (entity) =>
        entity.kind === 'flow' &&
        entity.id === stateId &&
        (flowName === undefined || entity.name === flowName),
    );
    if (snapshot) {
      const { execution, persisted } = parseFlowData(snapshot);
      return {
        lastMethod: execution.lastMethod ?? undefined,
        completedMethods: execution.completedMethods,
        persisted,
      };
    }
  } catch (error) {
    logger.warn(flowComponent, `could not read checkpoint ${checkpoint.id} of flow state ${stateId}`, error);
  }
  return undefined;
}

/** The provider and resolved location, and every checkpoint there (none when it does not exist yet). */
async function listLocation(location: string, options: ListFlowStatesOptions) {
  const provider = options.provider ?? (await registryOf(options).open(location)).provider;
  const resolved = provider.resolveLocation(provider.parseReference(location)?.location ?? location);
  let all: StoredCheckpoint[];
  try {
    all = await provider.list(resolved);
  } catch (error) {
    if (!CrewlineError.hasCode(error, 'not_found')) throw error;
    all = [];
  }
  return { provider, resolved, all };
}
