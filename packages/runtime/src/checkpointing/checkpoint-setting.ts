import { CrewlineError } from '@crewline/events';
import {
  type CheckpointConfig,
  type CheckpointConfigInput,
  type CheckpointSetting,
  type JsonValue,
  parseCheckpointConfig,
  resolveCheckpointSetting,
} from '@crewline/runtime-state';
import { defaultProvider, loadOptionalProvider } from './provider-catalog.js';

/**
 * Resolves a `checkpoint` setting along its inheritance chain, most specific first (Task → Agent →
 * Crew, or Agent → Flow), and fills in the default provider. `undefined` when checkpointing is off.
 */
export function resolveCheckpointChain(chain: readonly CheckpointSetting[]): CheckpointConfig | undefined {
  const config = resolveCheckpointSetting(chain);
  return config ? withDefaultProvider(config) : undefined;
}

/** A config with `provider` filled: the given one, or the process-wide `JsonProvider`. */
export function withDefaultProvider(config: CheckpointConfig): CheckpointConfig {
  return config.provider ? config : { ...config, provider: defaultProvider() };
}

/**
 * What a run stores for one entity's own setting: `undefined` inherits, `null` opts out (stops
 * inheritance), a config is used for that entity's events.
 */
export function ownCheckpointEntry(setting: CheckpointSetting): CheckpointConfig | null | undefined {
  if (setting === undefined) return undefined;
  if (setting === false) return null;
  return withDefaultProvider(parseCheckpointConfig(setting));
}

/** Validates a setting early (at construction), so a typo fails where it was written. */
export function validateCheckpointSetting(setting: CheckpointSetting, owner: string): CheckpointSetting {
  if (setting === undefined || typeof setting === 'boolean') return setting;
  try {
    parseCheckpointConfig(setting);
  } catch (error) {
    if (CrewlineError.isInstance(error)) {
      throw new CrewlineError(
        'runtime',
        'invalid_config',
        `${owner}: ${error.message.replace(/^\[[^\]]+\]\s*/, '')}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
  return setting;
}

/** The JSON form of a setting inside a checkpoint: the provider is stored by kind, never as an object. */
export type StoredCheckpointSetting =
  | boolean
  | { location?: string; onEvents?: string[]; maxCheckpoints?: number; providerKind?: string };

export function storeCheckpointSetting(setting: CheckpointSetting): StoredCheckpointSetting | null {
  if (setting === undefined) return null;
  if (typeof setting === 'boolean') return setting;
  const stored: { location?: string; onEvents?: string[]; maxCheckpoints?: number; providerKind?: string } =
    {};
  if (setting.location !== undefined) stored.location = setting.location;
  if (setting.onEvents !== undefined) stored.onEvents = [...setting.onEvents];
  if (setting.maxCheckpoints !== undefined) stored.maxCheckpoints = setting.maxCheckpoints;
  if (setting.provider !== undefined) stored.providerKind = setting.provider.kind;
  return stored;
}

/** Rebuilds a stored setting; providers are constructed again from their kind. */
export async function restoreCheckpointSetting(stored: JsonValue | undefined): Promise<CheckpointSetting> {
  if (stored === null || stored === undefined) return undefined;
  if (typeof stored === 'boolean') return stored;
  if (typeof stored !== 'object' || Array.isArray(stored)) return undefined;
  const input: { -readonly [K in keyof CheckpointConfigInput]: CheckpointConfigInput[K] } = {};
  if (typeof stored.location === 'string') input.location = stored.location;
  if (Array.isArray(stored.onEvents)) input.onEvents = stored.onEvents as CheckpointConfigInput['onEvents'];
  if (typeof stored.maxCheckpoints === 'number') input.maxCheckpoints = stored.maxCheckpoints;
  const kind = stored.providerKind;
  if (kind === 'sqlite' || kind === 'postgres') input.provider = await loadOptionalProvider(kind);
  else if (kind === 'json') input.provider = defaultProvider();
  return input;
}
