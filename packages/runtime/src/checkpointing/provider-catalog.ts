import { CrewlineError } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import {
  type CheckpointProvider,
  detectProviderKind,
  type ProviderCatalog,
  type ProviderKind,
} from '@crewline/runtime-state';
import { LazyProvider } from './lazy-provider.js';

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

type OptionalKind = Exclude<ProviderKind, 'json'>;
type ProviderConstructor = new (options?: Record<string, unknown>) => CheckpointProvider;

/**
 * Constructs the provider of an optional package, e.g. `SqliteProvider` from
 * `@crewline/provider-sqlite`, with `options` when given.
 */
export async function loadOptionalProvider(
  kind: OptionalKind,
  options?: Record<string, unknown>,
): Promise<CheckpointProvider> {
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
  return options === undefined
    ? new (ProviderClass as ProviderConstructor)()
    : new (ProviderClass as ProviderConstructor)(options);
}

const sharedLoading = new Map<OptionalKind, Promise<CheckpointProvider>>();
const sharedLoaded = new Map<OptionalKind, CheckpointProvider>();

/**
 * One provider of an optional package for the whole process, like the default JSON provider: the
 * runs that checkpoint to a `.db` without naming a provider, and the restores that read one, share
 * its connections.
 */
export function sharedOptionalProvider(kind: OptionalKind): Promise<CheckpointProvider> {
  let loading = sharedLoading.get(kind);
  if (!loading) {
    loading = loadOptionalProvider(kind).then((provider) => {
      sharedLoaded.set(kind, provider);
      return provider;
    });
    // A failed import is not remembered: installing the package and retrying works.
    loading.catch(() => sharedLoading.delete(kind));
    sharedLoading.set(kind, loading);
  }
  return loading;
}

/**
 * The provider a location calls for when the config names none: SQLite for a database (`.db`,
 * `.sqlite`, `db#id`, or a file with a SQLite header), JSON for a directory or anything else. The
 * SQLite package is imported on first use (a {@link LazyProvider} stands for it until then); a
 * Postgres URL is `provider_unavailable` until there is a Postgres provider.
 */
export function providerForLocation(location: string): CheckpointProvider {
  const kind = detectProviderKind(location);
  if (kind === 'json') return defaultProvider();
  if (kind === 'postgres') {
    throw new CrewlineError(
      component,
      'provider_unavailable',
      `checkpoint location "${location.replace(/\/\/([^:/@]+):[^@/]*@/, '//$1:***@')}" is a Postgres URL, but there is no Postgres provider yet (${optionalPackages.postgres.packageName}); use a directory (JSON) or a .db file (SQLite), or pass a provider`,
    );
  }
  return (
    sharedLoaded.get(kind) ??
    new LazyProvider(
      kind,
      () => sharedOptionalProvider(kind),
      () => sharedLoaded.get(kind),
    )
  );
}

/**
 * The same provider, constructed synchronously, when its package was already imported in this
 * process (manual `state.checkpoint('x.db')` calls cannot wait for an import).
 */
export function loadedOptionalProvider(kind: OptionalKind): CheckpointProvider | undefined {
  const shared = sharedLoaded.get(kind);
  if (shared) return shared;
  const { packageName, exportName } = optionalPackages[kind];
  const ProviderClass = loadedModules.get(packageName)?.[exportName];
  return typeof ProviderClass === 'function'
    ? new (ProviderClass as new () => CheckpointProvider)()
    : undefined;
}

/** Starts importing the SQLite provider in the background so that synchronous callers find it. */
export function warmOptionalProviders(): void {
  if (!sharedLoaded.has('sqlite')) void sharedOptionalProvider('sqlite').catch(() => undefined);
}

/** How references are read: JSON built in, SQLite and Postgres imported when a reference needs them. */
export const defaultProviderCatalog: ProviderCatalog = {
  json: () => defaultProvider(),
  sqlite: () => sharedOptionalProvider('sqlite'),
  postgres: () => loadOptionalProvider('postgres'),
};
