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
  type CheckpointSetting,
  type EntityKind,
  type EntitySnapshot,
  type LoadedCheckpoint,
  loadCheckpoint,
  parseCheckpointConfig,
} from '@crewline/runtime-state';
import { withDefaultProvider } from './checkpoint-setting.js';
import { defaultProviderCatalog } from './provider-catalog.js';

const component = 'runtime';

/**
 * Reads the checkpoint a `fromCheckpoint`/`restoreFrom` config points at (a JSON file, `db#id`,
 * `postgres-url#id`, or a directory/database meaning its latest), with restore lifecycle events.
 */
export async function loadRestoreTarget(
  reference: string | undefined,
  options: { bus?: EventBus; defaultLocation?: string; allowPrefix?: boolean } = {},
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
    const loaded = await loadCheckpoint(reference, defaultProviderCatalog, {
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
  const input: { -readonly [K in keyof CheckpointConfigInput]: CheckpointConfigInput[K] } = {
    location: explicit.location ?? loaded.location,
    provider: explicit.provider ?? loaded.provider,
  };
  const onEvents = explicit.onEvents ?? own.onEvents;
  if (onEvents !== undefined) input.onEvents = onEvents;
  const maxCheckpoints = explicit.maxCheckpoints ?? own.maxCheckpoints;
  if (maxCheckpoints !== undefined) input.maxCheckpoints = maxCheckpoints;
  return input;
}

/** Parses a config input into a resolved config with a provider. */
export function toConfig(input: CheckpointConfigInput): CheckpointConfig {
  return withDefaultProvider(parseCheckpointConfig(input));
}
