import { CrewlineError } from '@crewline/events';
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
 * checkpoint config's `providers`, or to `continueFromCheckpoint`. Close it when done with it. To use
 * the entries for every run of the process instead, give them to `registerProject({ providers })`.
 */
export function providerRegistry(entries: readonly ProviderEntry[] = []): ProviderRegistry {
  return createProviderRegistry([...runtimeBuiltinProviders(), ...entries]);
}

/** The process registry's answer to a reference no entry claims: how to register one in code. */
function unclaimedReference(reference: string, entries: readonly ProviderEntry[]): CrewlineError {
  return new CrewlineError(
    'runtime',
    'provider_unavailable',
    `no checkpoint provider claims "${reference}" (registered: ${entries.map((entry) => entry.name).join(', ')}); ${howToRegister}`,
  );
}

const howToRegister =
  "register the provider's entry for the process with registerProject({ providers: [entry] }) (loadProjectConfig() does so with the providers of crewline.config.ts), or pass the checkpoint config a provider, or providers: providerRegistry([entry])";

/** A process registry that can take more entries (see {@link registerProcessProviders}). */
interface ProcessProviderRegistry extends ProviderRegistry {
  add(entries: readonly ProviderEntry[]): void;
}

/**
 * The process's registry: crewline's entries, then every entry `registerProject` was given (a later
 * entry of a name replaces an earlier one, a built-in's too). Each registered entry gets a registry of
 * its own, kept for the process: the providers made before a later registration stay the shared
 * ones (one SQLite handle per database, one provider per entry), where a registry built anew for
 * every registration would make them again.
 */
function processProviderRegistry(): ProcessProviderRegistry {
  /** The built-ins' registry first, then one per registered entry, in the order registered. */
  const parts: ProviderRegistry[] = [providerRegistry()];
  let ordered: readonly ProviderEntry[] = parts[0]!.entries;

  /** The registry whose entry of `name` is the one in effect: the latest registered. */
  const ownerOf = (name: string): ProviderRegistry | undefined => {
    for (let index = parts.length - 1; index >= 0; index -= 1)
      if (parts[index]!.entry(name)) return parts[index];
    return undefined;
  };
  const requireOwner = (name: string): ProviderRegistry => {
    const owner = ownerOf(name);
    if (owner) return owner;
    throw new CrewlineError(
      'runtime',
      'provider_unavailable',
      `no checkpoint provider "${name}" is registered (registered: ${ordered.map((entry) => entry.name).join(', ')}); ${howToRegister}`,
    );
  };

  const registry: ProcessProviderRegistry = {
    get entries() {
      return ordered;
    },
    entry: (name) => ownerOf(name)?.entry(name),
    entryFor: (reference) => ordered.find((entry) => entry.claims(reference)),
    requireEntryFor(reference) {
      const entry = registry.entryFor(reference);
      if (!entry) throw unclaimedReference(reference, ordered);
      return entry;
    },
    load(name) {
      try {
        return requireOwner(name).load(name);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    provider: (name) => requireOwner(name).provider(name),
    created: (name) => ownerOf(name)?.created(name),
    async open(reference) {
      const entry = registry.requireEntryFor(reference);
      return { entry, provider: await registry.load(entry.name) };
    },
    rebuild: (name, options) => requireOwner(name).rebuild(name, options),
    storedOptionsOf: (provider) => ownerOf(provider.kind)?.storedOptionsOf(provider),
    async close() {
      for (const part of parts) await part.close();
    },
    closeNow() {
      for (const part of parts) part.closeNow();
    },
    add(entries) {
      for (const entry of entries) {
        // The same entry registered again (a config loaded twice) keeps the provider it made.
        if (parts.some((part) => part.entries.includes(entry))) continue;
        parts.push(createProviderRegistry([entry]));
      }
      // In effect, ordered as createProviderRegistry orders its entries: by priority, then as given.
      const byName = new Map<string, ProviderEntry>();
      for (const part of parts)
        for (const entry of part.entries) {
          byName.delete(entry.name);
          byName.set(entry.name, entry);
        }
      ordered = [...byName.values()]
        .map((entry, index) => ({ entry, index }))
        .sort((a, b) => (b.entry.priority ?? 0) - (a.entry.priority ?? 0) || a.index - b.index)
        .map(({ entry }) => entry);
    },
  };
  return registry;
}

/**
 * The registry used where a config names none: crewline's built-ins and the entries
 * `registerProject` was given, one per process so runs share their providers (one SQLite handle per
 * database). Entries are added by that explicit call only, never as a module loads; a caller may
 * still build a registry of its own and pass it.
 */
const processProviders = processProviderRegistry();
export const builtinRegistry: ProviderRegistry = processProviders;

/**
 * Adds provider entries to the process's registry (what `registerProject({ providers })` does): every
 * run of the process that names no registry finds a location they claim, and a restore rebuilds the
 * providers of their kind.
 */
export function registerProcessProviders(entries: readonly ProviderEntry[]): void {
  processProviders.add(entries);
}

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
