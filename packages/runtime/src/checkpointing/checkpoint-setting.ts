import { CrewlineError, logger } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import {
  type CheckpointConfig,
  type CheckpointConfigInput,
  type CheckpointProvider,
  type CheckpointSetting,
  type JsonValue,
  parseCheckpointConfig,
  resolveCheckpointSetting,
} from '@crewline/runtime-state';
import {
  defaultProvider,
  loadOptionalProvider,
  providerForLocation,
  sharedOptionalProvider,
} from './provider-catalog.js';

/**
 * Resolves a `checkpoint` setting along its inheritance chain, most specific first (Task → Agent →
 * Crew, or Agent → Flow), and fills in the default provider. `undefined` when checkpointing is off.
 */
export function resolveCheckpointChain(chain: readonly CheckpointSetting[]): CheckpointConfig | undefined {
  const config = resolveCheckpointSetting(chain);
  return config ? withDefaultProvider(config) : undefined;
}

/**
 * A config with `provider` filled: the given one, else the one its location calls for — the
 * process-wide `JsonProvider` for a directory, the SQLite provider for a database file (`.db`,
 * `.sqlite`, a SQLite header; imported on first use, `provider_unavailable` naming the package when
 * it is not installed). A Postgres URL without a provider is `provider_unavailable`.
 */
export function withDefaultProvider(config: CheckpointConfig): CheckpointConfig {
  return config.provider ? config : { ...config, provider: providerForLocation(config.location) };
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

/**
 * The JSON form of a setting inside a checkpoint: the provider is stored by kind, never as an object;
 * the options of crewline's own JSON and SQLite providers (plain numbers, strings and booleans, never
 * credentials) are stored too, so a restored run checkpoints as the original did.
 */
export type StoredCheckpointSetting =
  | boolean
  | {
      location?: string;
      onEvents?: string[];
      maxCheckpoints?: number;
      providerKind?: string;
      providerOptions?: Record<string, string | number | boolean>;
    };

/** Kinds whose options are known to hold no credentials, and so may be stored. */
const kindsWithStoredOptions = new Set(['json', 'sqlite']);

/** A provider's options as plain primitives, when its kind allows storing them. */
function storableOptions(
  provider: CheckpointProvider,
): Record<string, string | number | boolean> | undefined {
  if (!kindsWithStoredOptions.has(provider.kind)) return undefined;
  const options = (provider as { options?: unknown }).options;
  if (options === null || typeof options !== 'object') return undefined;
  const stored: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(options)) {
    if (typeof value === 'string' || typeof value === 'boolean' || Number.isFinite(value))
      stored[key] = value as string | number | boolean;
  }
  return Object.keys(stored).length > 0 ? stored : undefined;
}

export function storeCheckpointSetting(setting: CheckpointSetting): StoredCheckpointSetting | null {
  if (setting === undefined) return null;
  if (typeof setting === 'boolean') return setting;
  const stored: Exclude<StoredCheckpointSetting, boolean> = {};
  if (setting.location !== undefined) stored.location = setting.location;
  if (setting.onEvents !== undefined) stored.onEvents = [...setting.onEvents];
  if (setting.maxCheckpoints !== undefined) stored.maxCheckpoints = setting.maxCheckpoints;
  if (setting.provider !== undefined) {
    stored.providerKind = setting.provider.kind;
    const options = storableOptions(setting.provider);
    if (options) stored.providerOptions = options;
  }
  return stored;
}

function plainOptions(value: JsonValue | undefined): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...value } : undefined;
}

/**
 * A provider of a stored kind: the process-wide one when the stored options are its own (the usual
 * case), else one built with the stored options.
 */
async function restoredProvider(
  kind: string,
  options: Record<string, unknown> | undefined,
): Promise<CheckpointProvider | undefined> {
  if (kind !== 'json' && kind !== 'sqlite' && kind !== 'postgres') return undefined;
  const shared = kind === 'json' ? defaultProvider() : await sharedOptionalProvider(kind);
  if (options === undefined || sameOptions(shared, options)) return shared;
  try {
    return kind === 'json' ? new JsonProvider(options) : await loadOptionalProvider(kind, options);
  } catch (error) {
    // Options this version does not accept (written by another version): the defaults still work.
    logger.warn('runtime', `stored ${kind} provider options are not valid here; using the defaults`, error);
    return shared;
  }
}

function sameOptions(provider: CheckpointProvider, options: Record<string, unknown>): boolean {
  const own = storableOptions(provider) ?? {};
  const keys = Object.keys(options);
  return keys.length === Object.keys(own).length && keys.every((key) => own[key] === options[key]);
}

/** Rebuilds a stored setting; providers are constructed again from their kind and stored options. */
export async function restoreCheckpointSetting(stored: JsonValue | undefined): Promise<CheckpointSetting> {
  if (stored === null || stored === undefined) return undefined;
  if (typeof stored === 'boolean') return stored;
  if (typeof stored !== 'object' || Array.isArray(stored)) return undefined;
  const input: { -readonly [K in keyof CheckpointConfigInput]: CheckpointConfigInput[K] } = {};
  if (typeof stored.location === 'string') input.location = stored.location;
  if (Array.isArray(stored.onEvents)) input.onEvents = stored.onEvents as CheckpointConfigInput['onEvents'];
  if (typeof stored.maxCheckpoints === 'number') input.maxCheckpoints = stored.maxCheckpoints;
  const kind = stored.providerKind;
  if (typeof kind === 'string') {
    const provider = await restoredProvider(kind, plainOptions(stored.providerOptions));
    if (provider) input.provider = provider;
  }
  return input;
}
