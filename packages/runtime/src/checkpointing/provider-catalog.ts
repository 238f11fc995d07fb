import { CrewlineError } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import type { CheckpointProvider, ProviderCatalog, ProviderKind } from '@crewline/runtime-state';

const component = 'runtime';

let defaultJsonProvider: CheckpointProvider | undefined;

/** The provider used when a config names none: one `JsonProvider` shared by the process. */
export function defaultProvider(): CheckpointProvider {
  defaultJsonProvider ??= new JsonProvider();
  return defaultJsonProvider;
}

interface OptionalProviderModule {
  [exportName: string]: unknown;
}

const optionalPackages: Record<Exclude<ProviderKind, 'json'>, { packageName: string; exportName: string }> = {
  sqlite: { packageName: '@crewline/provider-sqlite', exportName: 'SqliteProvider' },
  postgres: { packageName: '@crewline/provider-postgres', exportName: 'PostgresProvider' },
};

const loadedModules = new Map<string, OptionalProviderModule>();

/**
 * Imports an optional provider package. The specifier goes through a variable so that bundlers and
 * the TypeScript compiler never make it a hard dependency of the runtime: a project that checkpoints
 * to JSON never installs (or builds) better-sqlite3.
 */
async function importOptional(packageName: string): Promise<OptionalProviderModule> {
  const cached = loadedModules.get(packageName);
  if (cached) return cached;
  const specifier: string = packageName;
  try {
    const module = (await import(specifier)) as OptionalProviderModule;
    loadedModules.set(packageName, module);
    return module;
  } catch (error) {
    throw new CrewlineError(
      component,
      'provider_unavailable',
      `${packageName} could not be loaded; install it next to @crewline/runtime (pnpm add ${packageName})`,
      { cause: error },
    );
  }
}

/** Constructs the provider of an optional package, e.g. `SqliteProvider` from `@crewline/provider-sqlite`. */
export async function loadOptionalProvider(kind: Exclude<ProviderKind, 'json'>): Promise<CheckpointProvider> {
  const { packageName, exportName } = optionalPackages[kind];
  const module = await importOptional(packageName);
  const ProviderClass = module[exportName];
  if (typeof ProviderClass !== 'function') {
    throw new CrewlineError(
      component,
      'provider_unavailable',
      `${packageName} does not export ${exportName}; update it to a version that matches @crewline/runtime`,
    );
  }
  return new (ProviderClass as new () => CheckpointProvider)();
}

/**
 * The same provider, constructed synchronously, when its package was already imported in this
 * process (manual `state.checkpoint('x.db')` calls cannot wait for an import).
 */
export function loadedOptionalProvider(kind: Exclude<ProviderKind, 'json'>): CheckpointProvider | undefined {
  const { packageName, exportName } = optionalPackages[kind];
  const ProviderClass = loadedModules.get(packageName)?.[exportName];
  return typeof ProviderClass === 'function'
    ? new (ProviderClass as new () => CheckpointProvider)()
    : undefined;
}

/** Starts importing the SQLite provider in the background so that synchronous callers find it. */
export function warmOptionalProviders(): void {
  if (!loadedModules.has(optionalPackages.sqlite.packageName)) {
    void importOptional(optionalPackages.sqlite.packageName).catch(() => undefined);
  }
}

/** How references are read: JSON built in, SQLite and Postgres imported when a reference needs them. */
export const defaultProviderCatalog: ProviderCatalog = {
  json: () => defaultProvider(),
  sqlite: () => loadOptionalProvider('sqlite'),
  postgres: () => loadOptionalProvider('postgres'),
};
