import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { type EventBus, logger } from '@crewline/events';
import {
  type CheckpointConfig,
  type CheckpointProvider,
  DEFAULT_CHECKPOINT_LOCATION,
  isValidBranchName,
  type LoadedCheckpoint,
  readyProvider,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { builtinRegistry, defaultProvider } from '../checkpointing/provider-registry.js';
import type { Run } from '../checkpointing/run.js';
import { loadRestoreTarget } from '../restore/load-restore-target.js';
import { flowComponent } from './errors.js';
import type { FlowGraph } from './flow-graph.js';

/** Where checkpoints are read from or written to: a location and the provider that stores it. */
export interface StorageTarget {
  location: string;
  provider: CheckpointProvider;
}

/** Branch prefix of persisted flow states: `flow-states/<state id>`. */
export const STATE_BRANCH_PREFIX = 'flow-states';

/**
 * The branch a persisted state's checkpoints are written on. Ids that are not safe as a branch
 * segment (spaces, slashes...) are kept readable and made unique with a short hash.
 */
export function stateBranch(stateId: string): string {
  const direct = `${STATE_BRANCH_PREFIX}/${stateId}`;
  if (isValidBranchName(direct) && !stateId.includes('/')) return direct;
  const readable = stateId
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 60);
  const hash = createHash('sha256').update(stateId).digest('hex').slice(0, 10);
  return `${STATE_BRANCH_PREFIX}/${readable ? `${readable}-` : ''}${hash}`;
}

/** The UUID namespace of {@link stateLineageId} (random, fixed: the ids it gives must never change). */
const stateLineageNamespace = Buffer.from('46be682c93d346418301f3f64e38d028', 'hex');

/**
 * The lineage id of the first run of a persisted state (a name-based UUID, version 5, of the flow
 * name and the state id): the same in every process, so two processes kicking off one new state id
 * at once claim one lineage head and the second is refused, where each started a lineage of its own
 * and both ran every method. Later runs of the state continue its latest save's lineage; a fork
 * starts a new lineage under a new state id.
 */
export function stateLineageId(flowName: string, stateId: string): string {
  const digest = createHash('sha1')
    .update(stateLineageNamespace)
    .update(JSON.stringify([flowName, stateId]))
    .digest();
  digest[6] = (digest[6]! & 0x0f) | 0x50;
  digest[8] = (digest[8]! & 0x3f) | 0x80;
  const hex = digest.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The storage a persisted flow (or a listing) uses: the given provider, else the one the location
 * calls for (a directory: JSON; a `.db` file: SQLite; a `postgres://` URL: Postgres), at
 * `./.checkpoints` by default.
 */
export async function storageTarget(
  location?: string,
  provider?: CheckpointProvider,
): Promise<StorageTarget> {
  const where = location ?? DEFAULT_CHECKPOINT_LOCATION;
  const chosen =
    provider ??
    (where === DEFAULT_CHECKPOINT_LOCATION
      ? defaultProvider()
      : (await builtinRegistry.open(where)).provider);
  return {
    provider: chosen,
    location: chosen.resolveLocation(chosen.parseReference(where)?.location ?? where),
  };
}

/** The latest checkpoint that holds the flow state `stateId` of flow `flowName`, if any. */
export async function findStateCheckpoint(
  target: StorageTarget,
  flowName: string | undefined,
  stateId: string,
): Promise<StoredCheckpoint | undefined> {
  const all = await target.provider.list(target.location);
  for (let index = all.length - 1; index >= 0; index -= 1) {
    const checkpoint = all[index] as StoredCheckpoint;
    if (
      checkpoint.entities.some(
        (entity) =>
          entity.kind === 'flow' &&
          entity.id === stateId &&
          (flowName === undefined || entity.name === flowName),
      )
    ) {
      return checkpoint;
    }
  }
  return undefined;
}

/**
 * Loads the latest checkpoint of a flow state through the one restore loader (restore events
 * included); `undefined` when nothing was saved under that id.
 */
export async function loadStateCheckpoint(
  target: StorageTarget,
  flowName: string | undefined,
  stateId: string,
  bus?: EventBus,
): Promise<LoadedCheckpoint | undefined> {
  const checkpoint = await findStateCheckpoint(target, flowName, stateId);
  if (!checkpoint) return undefined;
  return loadRestoreTarget(checkpoint.reference, { provider: target.provider, ...(bus ? { bus } : {}) });
}

/**
 * Where persisted states and pause checkpoints go: the flow's checkpoint config, the restored storage,
 * or `@persist()` options. A config's provider is the one its run writes through (`Run.execute`
 * awaits `readyProvider` too), never the stand-in of a provider still being imported (SQLite,
 * Postgres): a run keeps the parent of its next checkpoint, its write queue and its lease per
 * provider object, and a pause written through the stand-in named no parent (trial: SQLite).
 */
export async function persistTarget(
  graph: FlowGraph,
  config: CheckpointConfig | undefined,
  restored?: LoadedCheckpoint,
): Promise<StorageTarget> {
  if (config) {
    const provider = await readyProvider(config.provider ?? defaultProvider());
    return { provider, location: provider.resolveLocation(config.location) };
  }
  if (restored) return { provider: restored.provider, location: restored.location };
  return storageTarget(graph.persistOptions?.location, graph.persistOptions?.provider);
}

/**
 * Says so when the flow's checkpoint config sends its states somewhere else than the location its
 * `@persist({ location })` names: the config wins (a worker or a test points every run at its own
 * storage), and without a word the states vanished from where the class said they would be (trial:
 * `listStates()` found nothing). `target` is where they go ({@link persistTarget}).
 */
export function warnIfPersistLocationOverridden(
  flowName: string,
  graph: FlowGraph,
  config: CheckpointConfig | undefined,
  target: StorageTarget,
): void {
  const asked = graph.persistOptions?.location;
  if (config === undefined || asked === undefined || asked === config.location) return;
  // A path names the same place however it is spelt; a URL only as written (never printed: it may
  // carry a password, which the resolved location has left out).
  if (!asked.includes('://') && resolve(asked) === resolve(target.location)) return;
  logger.warn(
    flowComponent,
    `flow "${flowName}": its checkpoint config's location ${target.location} takes the place of the one @persist({ location }) names: its states are saved and found there (${flowName}.listStates({ location }) and crewline checkpoint flows list them with that location); give both the same location, or drop one`,
  );
}

/**
 * Writes the run's checkpoint to `target` on `trigger` (a `@persist()` method or a pause, when
 * automatic checkpoints did not). A failure is logged and the flow goes on: the state in memory is
 * intact, and the next save writes it again.
 */
export async function saveFlowState(
  run: Run,
  target: StorageTarget,
  trigger: string,
  options: { flowName: string; stateId: string; maxCheckpoints: number | undefined },
): Promise<void> {
  try {
    await run.state.writeCheckpoint({
      provider: target.provider,
      location: target.location,
      trigger,
      ...(options.maxCheckpoints !== undefined ? { maxCheckpoints: options.maxCheckpoints } : {}),
    });
  } catch (error) {
    logger.warn(
      flowComponent,
      `flow "${options.flowName}": saving state ${options.stateId} on ${trigger} to ${target.location} failed; the flow continues`,
      error,
    );
  }
}
