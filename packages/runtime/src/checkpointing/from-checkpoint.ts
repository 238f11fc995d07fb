import { statSync } from 'node:fs';
import {
  CheckpointRestoreCompletedEvent,
  CheckpointRestoreFailedEvent,
  CheckpointRestoreStartedEvent,
  CrewlineError,
  eventBus as defaultBus,
  type EventBus,
} from '@crewline/events';
import {
  type CheckpointConfig,
  type CheckpointConfigInput,
  type CheckpointProvider,
  type CheckpointSetting,
  DEFAULT_CHECKPOINT_LOCATION,
  type EntityKind,
  type EntitySnapshot,
  type LoadedCheckpoint,
  loadCheckpoint,
  type ProviderRegistry,
  parseCheckpointConfig,
} from '@crewline/runtime-state';
import { withDefaultProvider } from './checkpoint-setting.js';
import { onlyProvider, registryOf } from './provider-registry.js';

const component = 'runtime';

/**
 * Reads the checkpoint a `fromCheckpoint`/`restoreFrom` config points at (a JSON file, `db#id`,
 * `postgres-url#id`, or a directory/database meaning its latest), with restore lifecycle events.
 */
export async function loadRestoreTarget(
  reference: string | undefined,
  options: {
    bus?: EventBus;
    defaultLocation?: string;
    allowPrefix?: boolean;
    /**
     * The provider the restore config names: the reference is resolved and read with it alone
     * (its `parseReference`, `latest`, `list`, `read`). Default: the provider of the registry entry
     * that claims the reference.
     */
    provider?: CheckpointProvider;
    /** The registry to find the provider in (and rebuild stored providers from). Default: the built-ins. */
    providers?: ProviderRegistry;
  } = {},
): Promise<LoadedCheckpoint> {
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
      ...(options.defaultLocation !== undefined ? { defaultLocation: options.defaultLocation } : {}),
      ...(options.allowPrefix ? { allowPrefix: true } : {}),
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
    return loaded;
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
  config: CheckpointConfigInput,
  bus: EventBus | undefined,
): { bus?: EventBus; provider?: CheckpointProvider; providers?: ProviderRegistry } {
  return {
    ...(bus ? { bus } : {}),
    ...(config.provider ? { provider: config.provider } : {}),
    ...(config.providers ? { providers: config.providers } : {}),
  };
}

/** The first saved entity of `kind` (optionally named `name`), or a typed error. */
export function findEntitySnapshot(
  loaded: LoadedCheckpoint,
  kind: EntityKind,
  name?: string,
): EntitySnapshot {
  const snapshot = loaded.document.entities.find(
    (entity) => entity.kind === kind && (name === undefined || entity.name === name),
  );
  if (!snapshot) {
    const present =
      loaded.document.entities.map((entity) => `${entity.kind} "${entity.name}"`).join(', ') || 'none';
    throw new CrewlineError(
      component,
      'not_found',
      `checkpoint ${loaded.checkpoint.id} holds no ${kind}${name ? ` named "${name}"` : ''} (it holds: ${present}); restore it with the matching class`,
    );
  }
  return snapshot;
}

/**
 * The config a resumed run checkpoints with. By default it keeps writing where the checkpoint was
 * read from (same location and provider, so the lineage stays together) with the `onEvents` and
 * `maxCheckpoints` of the entity's own config, else of the saved run's config; anything given next
 * to `restoreFrom` wins.
 */
export function resumeCheckpointInput(
  entitySetting: CheckpointSetting,
  fromCheckpoint: CheckpointConfigInput,
  loaded: LoadedCheckpoint,
  savedSetting?: CheckpointSetting,
): CheckpointConfigInput {
  const { restoreFrom: _restoreFrom, ...explicit } = fromCheckpoint;
  const own =
    typeof entitySetting === 'object' ? entitySetting : typeof savedSetting === 'object' ? savedSetting : {};
  // A provider instance the user configured (with its options) is kept over a default one of its kind.
  const ownProvider = typeof entitySetting === 'object' ? entitySetting.provider : undefined;
  const input: { -readonly [K in keyof CheckpointConfigInput]: CheckpointConfigInput[K] } = {
    location: explicit.location ?? continuingLocation(loaded),
    provider:
      explicit.provider ?? (ownProvider?.kind === loaded.provider.kind ? ownProvider : loaded.provider),
  };
  // Providers for other locations the run may write to (a manual `state.checkpoint(location)`).
  const providers = explicit.providers ?? own.providers ?? loaded.providers;
  if (providers !== undefined) input.providers = providers;
  const onEvents = explicit.onEvents ?? own.onEvents;
  if (onEvents !== undefined) input.onEvents = onEvents;
  const maxCheckpoints = explicit.maxCheckpoints ?? own.maxCheckpoints;
  if (maxCheckpoints !== undefined) input.maxCheckpoints = maxCheckpoints;
  // How to continue (not what was saved): only what the caller gives now.
  if (explicit.onConflict !== undefined) input.onConflict = explicit.onConflict;
  const leaseTtlMs = explicit.leaseTtlMs ?? own.leaseTtlMs;
  if (leaseTtlMs !== undefined) input.leaseTtlMs = leaseTtlMs;
  return input;
}

/**
 * Where a restored run goes on writing: where its checkpoint was read from, except for a JSON
 * checkpoint file read on its own (a renamed copy, a file outside its location), which is no
 * location to write to: the run then writes to the default location.
 */
function continuingLocation(loaded: LoadedCheckpoint): string {
  if (loaded.provider.kind !== 'json') return loaded.location;
  try {
    return statSync(loaded.location).isFile() ? DEFAULT_CHECKPOINT_LOCATION : loaded.location;
  } catch {
    return loaded.location;
  }
}

/** Parses a config input into a resolved config with a provider. */
export function toConfig(input: CheckpointConfigInput): CheckpointConfig {
  return withDefaultProvider(parseCheckpointConfig(input));
}
