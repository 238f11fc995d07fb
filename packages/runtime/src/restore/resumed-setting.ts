import { statSync } from 'node:fs';
import {
  type CheckpointConfigInput,
  type CheckpointSetting,
  DEFAULT_CHECKPOINT_LOCATION,
  type EntitySnapshot,
  type JsonValue,
  type LoadedCheckpoint,
} from '@crewline/runtime-state';
import { restoreCheckpointSetting } from '../checkpointing/checkpoint-setting.js';

/**
 * The checkpoint setting a restored entity continues with (every restore of a crew, agent or flow
 * goes through it). A run that checkpointed keeps writing where its checkpoint was read from (see
 * {@link resumeCheckpointInput}). With `offStaysOff` (flows) an entity whose own setting is `false`
 * stays off, and one that neither checkpointed nor asks to now (a flow that only `@persist`s) stays so.
 */
export async function resumedCheckpointSetting(
  own: CheckpointSetting,
  config: CheckpointConfigInput,
  loaded: LoadedCheckpoint,
  snapshot: EntitySnapshot,
  options: { offStaysOff?: boolean } = {},
): Promise<CheckpointSetting> {
  if (options.offStaysOff && own === false) return false;
  const saved = await restoreCheckpointSetting(
    (snapshot.data as { checkpoint?: JsonValue } | undefined)?.checkpoint,
    loaded.providers,
  );
  const { restoreFrom: _restoreFrom, ...explicit } = config;
  if (
    options.offStaysOff &&
    own === undefined &&
    (saved === undefined || saved === false) &&
    Object.keys(explicit).length === 0
  ) {
    return saved;
  }
  return resumeCheckpointInput(own, explicit, loaded, saved);
}

/**
 * The config a resumed run checkpoints with. By default it keeps writing where the checkpoint was
 * read from (same location and provider, so the lineage stays together) with the `onEvents` and
 * `maxCheckpoints` of the entity's own config, else of the saved run's config; anything given next
 * to `restoreFrom` wins.
 */
function resumeCheckpointInput(
  entitySetting: CheckpointSetting,
  explicit: Omit<CheckpointConfigInput, 'restoreFrom'>,
  loaded: LoadedCheckpoint,
  savedSetting?: CheckpointSetting,
): CheckpointConfigInput {
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
