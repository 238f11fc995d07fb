import {
  builtinProviders,
  createProviderRegistry,
  type ModuleImporter,
  type ProviderEntry,
  type ProviderRegistry,
} from '@crewline/runtime-state';
import type { CliContext } from './cli-context.js';
import { loadProject } from './project-config.js';

/** Imports a provider package from the CLI, where it is a dependency or an optional peer. */
const importFromCli: ModuleImporter = (specifier) => import(/* @vite-ignore */ specifier);

export interface CliProvidersOptions {
  /** Replaces dynamic `import()` of crewline's provider packages (tests simulate a missing one). */
  importModule?: ModuleImporter;
  /** Entries after the built-in ones: the `providers` of the project's crewline.config.ts. */
  entries?: readonly ProviderEntry[];
}

/**
 * The CLI's provider registry: crewline's JSON, SQLite and Postgres entries, imported only when a
 * location of theirs is opened (`crewline checkpoint list` over JSON never loads better-sqlite3; a
 * missing package is `provider_unavailable` naming it), then the project's own entries.
 */
export function cliProviderRegistry(options: CliProvidersOptions = {}): ProviderRegistry {
  return createProviderRegistry([
    ...builtinProviders({ importModule: options.importModule ?? importFromCli }),
    ...(options.entries ?? []),
  ]);
}

const opened = new WeakMap<CliContext, Promise<ProviderRegistry>>();

/**
 * The registry a command opens locations with: the context's own (tests), else the built-ins plus
 * the `providers` of the project's crewline.config.ts (loaded, with the rest of the project's
 * registrations, only when the project has one). One per context; {@link closeProviders} closes it.
 */
export function providersOf(context: CliContext): Promise<ProviderRegistry> {
  if (context.providers) return Promise.resolve(context.providers);
  let registry = opened.get(context);
  if (!registry) {
    registry = loadProject(context.cwd).then((config) =>
      cliProviderRegistry(config?.providers ? { entries: config.providers } : {}),
    );
    opened.set(context, registry);
  }
  return registry;
}

/** Closes what the registry of {@link providersOf} opened (SQLite handles, Postgres pools). */
export async function closeProviders(context: CliContext): Promise<void> {
  const registry = context.providers ? Promise.resolve(context.providers) : opened.get(context);
  opened.delete(context);
  await (await registry?.catch(() => undefined))?.close();
}
