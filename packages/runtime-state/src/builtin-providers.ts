import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { stateError } from './errors.js';
import { installCommand } from './internal/install-command.js';
import type { CheckpointProvider } from './provider.js';
import type { ProviderEntry, StoredProviderOptions } from './provider-registry.js';

/**
 * Imports a package by name. Passed by the package that depends on the providers (the runtime, the
 * CLI), so that the import resolves from there: `@crewline/runtime-state` depends on none of them.
 */
export type ModuleImporter = (specifier: string) => Promise<unknown>;

export interface BuiltinProvidersOptions {
  /** Imports `@crewline/provider-json`, `-sqlite` or `-postgres` the first time one is needed. */
  importModule: ModuleImporter;
  /**
   * Modules the caller has imported already, by package name (the runtime depends on
   * `@crewline/provider-json`): their providers are made synchronously. Default: none.
   */
  modules?: Readonly<Record<string, unknown>>;
}

const sqliteHeader = 'SQLite format 3\u0000';
const urlScheme = /^[a-z][a-z0-9+.-]*:\/\//i;

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function readsAsSqlite(path: string): boolean {
  let descriptor: number | undefined;
  try {
    if (!statSync(path).isFile()) return false;
    descriptor = openSync(path, 'r');
    const buffer = Buffer.alloc(16);
    const bytes = readSync(descriptor, buffer, 0, 16, 0);
    return bytes === 16 && buffer.toString('latin1') === sqliteHeader;
  } catch {
    return false;
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
}

/** The path part of a file reference: without its `#id`. */
function pathOf(reference: string): { path: string; hasId: boolean } {
  const hash = reference.lastIndexOf('#');
  return hash >= 0 ? { path: reference.slice(0, hash), hasId: true } : { path: reference, hasId: false };
}

/** A Postgres connection string (`postgres://` or `postgresql://`). */
export function claimsPostgres(reference: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(reference);
}

/**
 * A SQLite database: a path (not a directory) with a `#id`, a `.db`/`.sqlite`/`.sqlite3` name or,
 * failing those, a SQLite file header.
 */
export function claimsSqlite(reference: string): boolean {
  if (urlScheme.test(reference)) return false;
  const { path, hasId } = pathOf(reference);
  if (isDirectory(path)) return false;
  if (hasId) return true;
  if (/\.(?:db|sqlite|sqlite3)$/i.test(path)) return true;
  // Reading the header opens and closes the file, which drops SQLite's POSIX locks if this process
  // has the database open; so only when the name says nothing.
  return readsAsSqlite(path);
}

/** A JSON location: any path (a directory, a checkpoint file, a place to create one); never a URL. */
export function claimsJson(reference: string): boolean {
  return !urlScheme.test(reference);
}

function isMissingPackage(error: unknown, specifier: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : '';
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && message.includes(specifier);
}

type ProviderConstructor = new (options?: Record<string, unknown>) => CheckpointProvider;

interface PackageProvider {
  name: string;
  packageName: string;
  exportName: string;
  /** Says what a location of this kind is, for the "install it" message. */
  locations: string;
  priority: number;
  claims: (reference: string) => boolean;
  /** Options stored in checkpoints: the provider's `options` (none for Postgres: its pool settings stay with the process). */
  storesOptions: boolean;
}

const packages: readonly PackageProvider[] = [
  {
    name: 'postgres',
    packageName: '@crewline/provider-postgres',
    exportName: 'PostgresProvider',
    locations: 'Postgres connection strings',
    priority: 0,
    claims: claimsPostgres,
    storesOptions: false,
  },
  {
    name: 'sqlite',
    packageName: '@crewline/provider-sqlite',
    exportName: 'SqliteProvider',
    locations: 'SQLite databases',
    priority: 0,
    claims: claimsSqlite,
    storesOptions: true,
  },
  {
    name: 'json',
    packageName: '@crewline/provider-json',
    exportName: 'JsonProvider',
    locations: 'JSON checkpoint directories and files',
    priority: -100,
    claims: claimsJson,
    storesOptions: true,
  },
];

/** A provider's `options` as plain primitives (what JSON and SQLite accept back; no credentials). */
function primitiveOptions(provider: CheckpointProvider): StoredProviderOptions | undefined {
  const options = (provider as { options?: unknown }).options;
  if (options === null || typeof options !== 'object') return undefined;
  const stored: StoredProviderOptions = {};
  for (const [key, value] of Object.entries(options)) {
    if (typeof value === 'string' || typeof value === 'boolean' || Number.isFinite(value))
      stored[key] = value as string | number | boolean;
  }
  return Object.keys(stored).length > 0 ? stored : undefined;
}

function construct(
  spec: PackageProvider,
  module: unknown,
  options: StoredProviderOptions | undefined,
): CheckpointProvider {
  const ProviderClass = (module as Record<string, unknown> | null | undefined)?.[spec.exportName];
  if (typeof ProviderClass !== 'function') {
    throw stateError(
      'provider_unavailable',
      `${spec.packageName} does not export ${spec.exportName}; install a version that matches @crewline/runtime-state`,
    );
  }
  return options === undefined
    ? new (ProviderClass as ProviderConstructor)()
    : new (ProviderClass as ProviderConstructor)(options);
}

async function importPackage(spec: PackageProvider, importModule: ModuleImporter): Promise<unknown> {
  try {
    return await importModule(spec.packageName);
  } catch (error) {
    if (isMissingPackage(error, spec.packageName)) {
      throw stateError(
        'provider_unavailable',
        `${spec.locations} need ${spec.packageName}, which is not installed; install ${spec.packageName} (${installCommand(spec.packageName)})`,
        { cause: error },
      );
    }
    throw stateError(
      'provider_unavailable',
      `${spec.packageName} is installed but could not be loaded (${error instanceof Error ? error.message : String(error)}); reinstall it`,
      { cause: error },
    );
  }
}

/**
 * crewline's own providers as registry entries: Postgres for `postgres://` URLs, SQLite for database
 * files, JSON for every other path (lowest priority). Each package is imported on first use through
 * `importModule`, so a project that checkpoints to JSON never loads better-sqlite3, and a package
 * that is not installed is a `provider_unavailable` error naming it.
 */
export function builtinProviders(options: BuiltinProvidersOptions): ProviderEntry[] {
  return packages.map((spec) => {
    const preloaded = options.modules?.[spec.packageName];
    const entry: ProviderEntry = {
      name: spec.name,
      packageName: spec.packageName,
      priority: spec.priority,
      claims: spec.claims,
      create: (stored) =>
        preloaded !== undefined
          ? construct(spec, preloaded, stored)
          : importPackage(spec, options.importModule).then((module) => construct(spec, module, stored)),
      ...(spec.storesOptions ? { storedOptions: primitiveOptions } : {}),
    };
    return entry;
  });
}
