import {
  CheckpointRestoreCompletedEvent,
  CheckpointRestoreFailedEvent,
  CheckpointRestoreStartedEvent,
  CrewlineError,
  eventBus as defaultBus,
  type EventBus,
} from '@crewline/events';
import {
  type CheckpointConfigInput,
  type CheckpointProvider,
  type LoadedCheckpoint,
  loadCheckpoint,
  type ProviderRegistry,
} from '@crewline/runtime-state';
import { newerHeadId } from '@crewline/runtime-state/internal';
import type { RestoredCheckpoint } from '../checkpointing/head-when-read.js';
import { onlyProvider, registryOf } from '../checkpointing/provider-registry.js';
import { asksForLatest } from './asks-for-latest.js';

const component = 'runtime';

/** Where and how {@link loadRestoreTarget} reads a reference. */
export interface RestoreTargetOptions {
  /** The bus the restore events go to. Default: the process-wide `eventBus`. */
  bus?: EventBus;
  /** Where a bare id or id prefix is looked up (the CLI's location). Default: none. */
  defaultLocation?: string;
  /**
   * The provider the restore config names: the reference is resolved and read with it alone (its
   * `parseReference`, `latest`, `list`, `read`). Default: the provider of the registry entry that
   * claims the reference.
   */
  provider?: CheckpointProvider | undefined;
  /** The registry to find the provider in (and rebuild stored providers from). Default: the built-ins. */
  providers?: ProviderRegistry | undefined;
}

/**
 * The one loader of every restore — Crew, Agent and Flow (`kickoff({ fromCheckpoint })`,
 * `fromCheckpoint`, `fork`, `Flow.resume`) and `continueFromCheckpoint`: reads the checkpoint a
 * reference names (a JSON file, `db-path#id`, `postgres-url#id`, a directory/database meaning its
 * latest), emitting `checkpoint_restore_started` and `_completed` (or `_failed`). An id may be
 * shortened to a unique prefix (of the id, or of its random part) wherever it is given; a prefix that
 * matches several checkpoints is `ambiguous_reference`. The checkpoint comes marked with whether it
 * was the newest of its run when read (`headWhenRead`): what its continuation does when it finds the
 * run continued since (refused, or a re-run on a new branch) depends on it.
 */
export async function loadRestoreTarget(
  reference: string | undefined,
  options: RestoreTargetOptions = {},
): Promise<RestoredCheckpoint> {
  if (typeof reference !== 'string' || reference === '') {
    throw new CrewlineError(
      component,
      'invalid_argument',
      'restoreFrom must name a checkpoint: a JSON file, "db-path#id", or a directory/database for its latest',
    );
  }
  const bus = options.bus ?? defaultBus;
  const started = performance.now();
  bus.emit({ kind: 'checkpoint', id: reference }, new CheckpointRestoreStartedEvent({ reference }));
  try {
    // A given provider reads every reference, and checkpoints keep storing what its kind's entry stores.
    const registry = options.provider
      ? onlyProvider(options.provider, registryOf(options))
      : registryOf(options);
    const loaded = await loadCheckpoint(reference, registry, {
      allowPrefix: true,
      ...(options.defaultLocation !== undefined ? { defaultLocation: options.defaultLocation } : {}),
    });
    const { metadata } = loaded.document;
    bus.emit(
      { kind: 'checkpoint', id: metadata.id },
      new CheckpointRestoreCompletedEvent({
        reference,
        checkpointId: metadata.id,
        branch: metadata.branch,
        parentId: metadata.parentId,
        durationMs: performance.now() - started,
      }),
    );
    return { ...loaded, headWhenRead: await headWhenRead(reference, loaded, options) };
  } catch (error) {
    bus.emit(
      { kind: 'checkpoint', id: reference },
      new CheckpointRestoreFailedEvent({
        reference,
        error: error instanceof Error ? error.message : String(error),
      }),
    );
    throw error;
  }
}

/** The options of {@link loadRestoreTarget} a restore config gives (`provider`, `providers`), with the bus. */
export function restoreOptions(
  config: Pick<CheckpointConfigInput, 'provider' | 'providers'>,
  bus: EventBus | undefined,
): RestoreTargetOptions {
  return {
    ...(bus ? { bus } : {}),
    ...(config.provider ? { provider: config.provider } : {}),
    ...(config.providers ? { providers: config.providers } : {}),
  };
}

/**
 * Whether `loaded` was the newest checkpoint of its run when it was read (see
 * `RestoredCheckpoint.headWhenRead`): at once for a reference that asks for the latest (it was
 * resolved as the newest), else asked of the store right after the read (a store that cannot say
 * counts it as the newest: a continuation found since is then refused, never paid for again).
 */
async function headWhenRead(
  reference: string,
  loaded: LoadedCheckpoint,
  options: RestoreTargetOptions,
): Promise<boolean> {
  if (asksForLatest(reference, loaded.provider, options.defaultLocation)) return true;
  return (await newerHeadId(loaded.provider, loaded.location, loaded.document.metadata)) === undefined;
}
