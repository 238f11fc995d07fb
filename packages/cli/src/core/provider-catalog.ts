import type { CheckpointProvider, ProviderCatalog } from '@crewline/runtime-state';

// Errors are built on the error path only: a catalog is created for every command, `--help` too.
async function providerUnavailable(message: string, cause?: unknown): Promise<Error> {
  const { cliError } = await import('./cli-error.js');
  return cliError('provider_unavailable', message, cause === undefined ? undefined : { cause });
}

/** Imports a module specifier given at run time (so TypeScript does not need it installed). */
type ModuleImporter = (specifier: string) => Promise<Record<string, unknown>>;

const importModule: ModuleImporter = (specifier) => import(specifier);

function isMissingModule(error: unknown, specifier: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : '';
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && message.includes(specifier);
}

/** The provider class a package exports, constructed with no options. */
async function loadProvider(
  specifier: string,
  exportName: string,
  missing: string,
  importer: ModuleImporter,
): Promise<CheckpointProvider> {
  let module: Record<string, unknown>;
  try {
    module = await importer(specifier);
  } catch (error) {
    if (isMissingModule(error, specifier)) throw await providerUnavailable(missing, error);
    throw await providerUnavailable(
      `${specifier} is installed but could not be loaded (${error instanceof Error ? error.message : String(error)}); reinstall it`,
      error,
    );
  }
  const ProviderClass = module[exportName] as (new () => CheckpointProvider) | undefined;
  if (typeof ProviderClass !== 'function') {
    throw await providerUnavailable(`${specifier} does not export ${exportName}; install a matching version`);
  }
  return new ProviderClass();
}

export interface CatalogOptions {
  /** Replaces dynamic `import()` (tests simulate a missing package with it). Default: `import()`. */
  importer?: ModuleImporter;
}

/**
 * Lazy loaders for every kind of checkpoint location. Nothing is imported until a location of that
 * kind is used, so `crewline list` over JSON files never loads better-sqlite3, and a missing
 * optional provider is reported with the package to install. One provider instance per kind.
 */
export function createProviderCatalog(options: CatalogOptions = {}): ProviderCatalog {
  const importer = options.importer ?? importModule;
  const cache = new Map<string, Promise<CheckpointProvider>>();
  const once = (kind: string, load: () => Promise<CheckpointProvider>) => () => {
    let provider = cache.get(kind);
    if (!provider) {
      provider = load();
      // A failed load is not cached: installing the package and retrying in the same process works.
      provider.catch(() => cache.delete(kind));
      cache.set(kind, provider);
    }
    return provider;
  };
  const catalog: ProviderCatalog = {
    json: once('json', () =>
      loadProvider(
        '@crewline/provider-json',
        'JsonProvider',
        'JSON checkpoint locations need @crewline/provider-json; install @crewline/provider-json',
        importer,
      ),
    ),
    sqlite: once('sqlite', () =>
      loadProvider(
        '@crewline/provider-sqlite',
        'SqliteProvider',
        'this location is a SQLite database; install @crewline/provider-sqlite (npm install @crewline/provider-sqlite) to read it',
        importer,
      ),
    ),
    postgres: once('postgres', () =>
      loadProvider(
        '@crewline/provider-postgres',
        'PostgresProvider',
        'this location is a Postgres connection string; install @crewline/provider-postgres (npm install @crewline/provider-postgres) to read it',
        importer,
      ),
    ),
  };
  openedProviders.set(catalog, cache);
  return catalog;
}

const openedProviders = new WeakMap<ProviderCatalog, Map<string, Promise<CheckpointProvider>>>();

/** Closes every provider a catalog made by {@link createProviderCatalog} has opened (SQLite handles, Postgres pools). */
export async function closeCatalog(catalog: ProviderCatalog): Promise<void> {
  const cache = openedProviders.get(catalog);
  if (!cache) return;
  for (const loading of cache.values()) {
    const provider = await loading.catch(() => undefined);
    await provider?.close?.();
  }
  cache.clear();
}
