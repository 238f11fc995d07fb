import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ProjectConfig } from '@crewline/runtime';
import { findProjectConfigFile } from '@crewline/runtime/internal';
import { standardDecoratorsTransform } from './standard-decorators.js';

/** True when node already runs with a TypeScript loader (`pnpm crewline`: `--import tsx`). */
function typeScriptLoaderActive(): boolean {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return flags.some((flag) =>
    /(?:^|[\\/=])tsx(?:$|[\\/])|ts-node|--experimental-(?:strip|transform)-types/.test(flag),
  );
}

/**
 * Where the jiti instance below caches what it compiled. Not jiti's default directory: a config
 * cached there by an earlier CLI holds decorators in jiti's legacy form, and jiti's cache key is the
 * file's source alone, so it would be served again.
 */
const compiledCache = join(tmpdir(), 'jiti-crewline');

/**
 * Imports a TypeScript file with jiti: it strips types in JavaScript (no native binary to install,
 * unlike esbuild) and loads `.ts` in a project with or without `"type": "module"`. What the file
 * imports from packages is imported natively, so `@crewline/runtime` in the config is the same module
 * instance the CLI uses (Flow subclasses, tools, the registry). Files with decorators are compiled
 * by TypeScript first (see standardDecoratorsTransform): jiti alone gives flows no decorator metadata.
 */
export async function importWithJiti(path: string): Promise<unknown> {
  const { createJiti } = await import('jiti');
  const plain = createJiti(import.meta.url, { interopDefault: false, fsCache: false });
  return createJiti(import.meta.url, {
    interopDefault: false,
    fsCache: compiledCache,
    transform: standardDecoratorsTransform(plain),
  }).import(path);
}

/**
 * Imports a project file, TypeScript included: node imports `.js`/`.mjs` itself, and `.ts` too when a
 * TypeScript loader is active already; otherwise `.ts`, `.mts` and `.cts` go through jiti.
 */
async function importProjectModule(path: string): Promise<unknown> {
  if (/\.[cm]?ts$/.test(path) && !typeScriptLoaderActive()) return importWithJiti(path);
  // A config compiled as CommonJS is unwrapped by the runtime's loadProjectConfig.
  return import(pathToFileURL(path).href);
}

const loaded = new Map<string, Promise<ProjectConfig | undefined>>();

/**
 * Loads and registers the project's `crewline.config.ts` from `cwd` (once per directory) so that
 * resume, fork and the browser can rebuild custom tools, models and flows, and every command can
 * open the locations of its `providers`. Resolves to the config, or undefined when the project has
 * none (the runtime is then not even imported).
 */
export function loadProject(cwd: string): Promise<ProjectConfig | undefined> {
  let project = loaded.get(cwd);
  if (project === undefined) {
    project = (async () => {
      if (!findProjectConfigFile(cwd)) return undefined;
      const runtime = await import('@crewline/runtime');
      return runtime.loadProjectConfig({ cwd, importModule: importProjectModule });
    })();
    loaded.set(cwd, project);
  }
  return project;
}
