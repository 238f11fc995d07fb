import { CrewlineError, logger } from '@crewline/events';
import {
  type CheckpointConfig,
  type CheckpointConfigInput,
  type CheckpointProvider,
  type CheckpointSetting,
  type JsonValue,
  type ProviderRegistry,
  parseCheckpointConfig,
  resolveCheckpointSetting,
  type StoredProviderOptions,
} from '@crewline/runtime-state';
import { builtinRegistry, registryOf } from './provider-registry.js';
import type { Settle } from './snapshot-values.js';

/**
 * Resolves a `checkpoint` setting along its inheritance chain, most specific first (Task → Agent →
 * Crew, or Agent → Flow), and fills in the default provider. `undefined` when checkpointing is off.
 */
export function resolveCheckpointChain(chain: readonly CheckpointSetting[]): CheckpointConfig | undefined {
  const config = resolveCheckpointSetting(chain);
  return config ? withDefaultProvider(config) : undefined;
}

/**
 * A config with `provider` filled: the given one, else the shared provider of the registry entry
 * that claims its location (the config's `providers`, else the built-ins) — the process-wide
 * `JsonProvider` for a directory, the SQLite provider for a database file, the Postgres provider for
 * a `postgres://` URL. SQLite and Postgres are imported on first use (a stand-in until then that the
 * run waits for at kickoff: `provider_unavailable` naming the package when it is not installed). A
 * location no entry claims is `provider_unavailable`.
 */
export function withDefaultProvider(config: CheckpointConfig): CheckpointConfig {
  if (config.provider) return config;
  const registry = registryOf(config);
  return { ...config, provider: registry.provider(registry.requireEntryFor(config.location).name) };
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
 * The JSON form of a setting inside a checkpoint: the provider is stored by kind (its registry
 * entry's name), never as an object, with the options its entry says may be stored (plain values,
 * never credentials: JSON's and SQLite's options, none of Postgres's), so a restored run checkpoints
 * as the original did.
 */
export type StoredCheckpointSetting =
  | boolean
  | {
      location?: string;
      onEvents?: string[];
      maxCheckpoints?: number;
      providerKind?: string;
      providerOptions?: StoredProviderOptions;
    };

export function storeCheckpointSetting(setting: CheckpointSetting): StoredCheckpointSetting | null {
  if (setting === undefined) return null;
  if (typeof setting === 'boolean') return setting;
  const stored: Exclude<StoredCheckpointSetting, boolean> = {};
  if (setting.location !== undefined) stored.location = setting.location;
  if (setting.onEvents !== undefined) stored.onEvents = [...setting.onEvents];
  if (setting.maxCheckpoints !== undefined) stored.maxCheckpoints = setting.maxCheckpoints;
  if (setting.provider !== undefined) {
    stored.providerKind = setting.provider.kind;
    const options = registryOf(setting).storedOptionsOf(setting.provider);
    if (options) stored.providerOptions = options;
  }
  return stored;
}

/** What a stored setting was built from: while all of it holds, so does the stored form. */
interface StoredSettingEntry {
  location: string | undefined;
  /** The events as they were when stored: a list changed in place is found changed. */
  onEventsCopy: readonly string[] | undefined;
  maxCheckpoints: number | undefined;
  provider: CheckpointProvider | undefined;
  providers: ProviderRegistry | undefined;
  stored: JsonValue;
}

const storedSettings = new WeakMap<object, StoredSettingEntry>();

function sameEvents(events: CheckpointConfigInput['onEvents'], copy: readonly string[] | undefined): boolean {
  if (events === undefined || copy === undefined) return events === undefined && copy === undefined;
  if (typeof events === 'string') return copy.length === 1 && copy[0] === events;
  if (events.length !== copy.length) return false;
  for (let index = 0; index < copy.length; index += 1) if (events[index] !== copy[index]) return false;
  return true;
}

/**
 * {@link storeCheckpointSetting}, settled in the run (see `SettledValues`) and kept per setting
 * object while the fields it is built from hold: a crew or flow checkpointing on every event stored
 * the same setting hundreds of times, and building it (the provider's stored options included) and
 * redacting it again was a fixed cost of every checkpoint. A field changed in place (a location, an
 * event added to `onEvents`, another provider) is found changed and stored anew. The stored options
 * are a provider's own (`options`, fixed when it is made), so the provider's identity stands for them.
 */
export function settledCheckpointSetting(setting: CheckpointSetting, settle: Settle): JsonValue {
  if (setting === undefined || typeof setting === 'boolean') return setting ?? null;
  const known = storedSettings.get(setting);
  if (
    known !== undefined &&
    known.location === setting.location &&
    known.maxCheckpoints === setting.maxCheckpoints &&
    known.provider === setting.provider &&
    known.providers === setting.providers &&
    sameEvents(setting.onEvents, known.onEventsCopy)
  )
    return settle(known.stored);
  const stored = storeCheckpointSetting(setting) as JsonValue;
  storedSettings.set(setting, {
    location: setting.location,
    onEventsCopy: setting.onEvents === undefined ? undefined : [...setting.onEvents],
    maxCheckpoints: setting.maxCheckpoints,
    provider: setting.provider,
    providers: setting.providers,
    stored,
  });
  return settle(stored);
}

function storedOptions(value: JsonValue | undefined): StoredProviderOptions | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const options: StoredProviderOptions = {};
  for (const [key, option] of Object.entries(value)) {
    if (typeof option === 'string' || typeof option === 'number' || typeof option === 'boolean')
      options[key] = option;
  }
  return options;
}

/**
 * The provider a checkpoint's setting names, from the registry the checkpoint was read through: the
 * shared one when the stored options are its own (the usual case), else one built with them.
 * `undefined` (with a warning) when no entry of that kind is registered: the run then writes with
 * the provider it was read with.
 */
async function restoredProvider(
  kind: string,
  options: StoredProviderOptions | undefined,
  registry: ProviderRegistry,
): Promise<CheckpointProvider | undefined> {
  if (!registry.entry(kind)) {
    logger.warn(
      'runtime',
      `the checkpoint was written with a "${kind}" provider, which is not registered here; to rebuild it, add its entry to \`providers\` in crewline.config.ts for the CLI, or in code pass the registry that holds it (\`providerRegistry([entry])\`) where you restore`,
    );
    return undefined;
  }
  try {
    return await registry.rebuild(kind, options);
  } catch (error) {
    if (options === undefined || !CrewlineError.hasCode(error, 'invalid_config')) throw error;
    // Options this version does not accept (written by another version): the defaults still work.
    logger.warn('runtime', `stored ${kind} provider options are not valid here; using the defaults`, error);
    return registry.load(kind);
  }
}

/**
 * Rebuilds a stored setting: its provider is made again from its kind and stored options by the
 * registry the checkpoint was read through (default: the built-ins), which the setting keeps.
 */
export async function restoreCheckpointSetting(
  stored: JsonValue | undefined,
  registry: ProviderRegistry = builtinRegistry,
): Promise<CheckpointSetting> {
  if (stored === null || stored === undefined) return undefined;
  if (typeof stored === 'boolean') return stored;
  if (typeof stored !== 'object' || Array.isArray(stored)) return undefined;
  const input: { -readonly [K in keyof CheckpointConfigInput]: CheckpointConfigInput[K] } = {};
  if (typeof stored.location === 'string') input.location = stored.location;
  if (Array.isArray(stored.onEvents)) input.onEvents = stored.onEvents as CheckpointConfigInput['onEvents'];
  if (typeof stored.maxCheckpoints === 'number') input.maxCheckpoints = stored.maxCheckpoints;
  const kind = stored.providerKind;
  if (typeof kind === 'string') {
    const provider = await restoredProvider(kind, storedOptions(stored.providerOptions), registry);
    if (provider) input.provider = provider;
  }
  if (registry !== builtinRegistry) input.providers = registry;
  return input;
}
