import * as providerJson from '@crewline/provider-json';
import {
  builtinProviders,
  type CheckpointProvider,
  createProviderRegistry,
  type ModuleImporter,
  type ProviderEntry,
  type ProviderRegistry,
  providerEntryOf,
} from '@crewline/runtime-state';

/**
 * Imports an optional provider package from here, where it is an (optional peer) dependency. The
 * specifier goes through a variable so that bundlers and the TypeScript compiler never make it a
 * hard dependency: a project that checkpoints to JSON never installs (or builds) better-sqlite3.
 */
const importOptional: ModuleImporter = (specifier) => import(/* @vite-ignore */ specifier);

/**
 * crewline's providers as the runtime makes them: JSON (a dependency of the runtime) constructed at
 * once, SQLite and Postgres (optional peers) imported the first time a location needs them.
 */
function runtimeBuiltinProviders(): ProviderEntry[] {
  return builtinProviders({
    importModule: importOptional,
    modules: { '@crewline/provider-json': providerJson },
  });
}

/**
 * A provider registry of crewline's JSON, SQLite and Postgres entries followed by `entries` (a
 * third-party provider's entry, what `crewline.config.ts` lists as `providers`). Pass it as a
 * checkpoint config's `providers`, or to `continueFromCheckpoint`. Close it when done with it.
 */
export function providerRegistry(entries: readonly ProviderEntry[] = []): ProviderRegistry {
  return createProviderRegistry([...runtimeBuiltinProviders(), ...entries]);
}

/**
 * The registry used where a config names none: the built-ins only, one per process so runs share
 * their providers (one SQLite handle per database). Nothing is ever added to it: a caller with more
 * providers builds its own registry and passes it.
 */
export const builtinRegistry: ProviderRegistry = providerRegistry();

let closesAtExit = false;

/**
 * Closes the built-in registry's providers when the process exits (its natural end or
 * `process.exit()`), from the first run that uses them on. Why: `process.exit()` closes no database
 * handle, so the commits of a SQLite run stayed in the `-wal` file beside the database, and a copy of
 * the `.db` alone missed them. Closing costs what SQLite's own close does (copying the WAL back).
 * Installed once per process, never removed: a registry made by a caller is the caller's to close.
 */
export function closeBuiltinProvidersAtExit(): void {
  if (closesAtExit) return;
  closesAtExit = true;
  process.on('exit', () => builtinRegistry.closeNow());
}

/** The registry of a config (its `providers`), else the built-in one. */
export function registryOf(
  config: { providers?: ProviderRegistry | undefined } | undefined,
): ProviderRegistry {
  return config?.providers ?? builtinRegistry;
}

/** The provider used when nothing names one: the process's `JsonProvider`. */
export function defaultProvider(): CheckpointProvider {
  return builtinRegistry.provider('json');
}

/**
 * A registry that reads every reference with `provider` (a restore config's `provider`), storing in
 * checkpoints what `registry`'s entry of its kind stores.
 */
export function onlyProvider(
  provider: CheckpointProvider,
  registry: ProviderRegistry = builtinRegistry,
): ProviderRegistry {
  const storedOptions = registry.entry(provider.kind)?.storedOptions;
  return createProviderRegistry([providerEntryOf(provider, storedOptions ? { storedOptions } : {})]);
}
