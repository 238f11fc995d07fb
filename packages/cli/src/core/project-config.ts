import { lstatSync, mkdirSync, readdirSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
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

/** The nearest `node_modules` directory at or above `directory`, or undefined when there is none. */
function nearestNodeModules(directory: string): string | undefined {
  for (let current = directory; ; current = dirname(current)) {
    const candidate = join(current, 'node_modules');
    try {
      if (statSync(candidate).isDirectory()) return candidate;
    } catch {
      // Not here: look in the parent.
    }
    if (dirname(current) === current) return undefined;
  }
}

/**
 * The directory where the configs compiled for a project are kept between commands:
 * `node_modules/.cache/crewline` in the nearest node_modules directory above the config file, where
 * jiti and Babel keep theirs. The compiled code holds what the source holds (a key written inline in
 * the config too), so it stays in the project's tree, with the project's own permissions, and goes
 * with it; a project with no node_modules directory is compiled each time rather than cached in a
 * directory shared with other projects or users. A compiled config is code the CLI runs: a directory
 * under that name that is a symbolic link, is owned by another user or that others may write to is
 * not used (undefined: every command compiles again).
 *
 * @param configFile the config file (its directory is where the search starts).
 */
export function compiledCacheDirectory(configFile: string): string | undefined {
  const nodeModules = nearestNodeModules(dirname(configFile));
  if (nodeModules === undefined) return undefined;
  const directory = join(nodeModules, '.cache', 'crewline');
  try {
    // `.cache` is shared with the other tools, and made as they make it; only ours is 0700.
    mkdirSync(dirname(directory), { recursive: true });
    mkdirSync(directory, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
  }
  const userId = process.getuid?.();
  try {
    // lstat: a symbolic link planted under this name is refused, not followed.
    const status = lstatSync(directory);
    if (!status.isDirectory()) return undefined;
    // Windows has no uid and no such mode bits.
    if (userId !== undefined && (status.uid !== userId || (status.mode & 0o022) !== 0)) return undefined;
  } catch {
    return undefined;
  }
  return directory;
}

/**
 * Removes what earlier versions of the CLI kept in `<tmpdir>/crewline-compiled-<uid>`: compiled configs,
 * most in plain text with any inline key, under the directory shared by every user. Only this user's
 * directory (not a symbolic link) and the entries in it this user owns are removed; an entry is
 * unlinked, never followed. Nothing is there after the first command of this version, so later
 * commands pay one lstat.
 *
 * @param parent the directory it was made in; defaults to the system's temporary directory.
 */
export function removeTemporaryCompiledCache(parent: string = tmpdir()): void {
  const userId = process.getuid?.();
  const directory = join(parent, `crewline-compiled-${userId ?? userInfo().username}`);
  try {
    const status = lstatSync(directory);
    if (!status.isDirectory() || (userId !== undefined && status.uid !== userId)) return;
    for (const name of readdirSync(directory)) {
      const path = join(directory, name);
      try {
        const entry = lstatSync(path);
        // The cache wrote files only: a directory in it is not ours to walk.
        if (entry.isDirectory() || (userId !== undefined && entry.uid !== userId)) continue;
        unlinkSync(path);
      } catch {
        // Gone already, or not ours to remove: the rest is still removed.
      }
    }
    rmdirSync(directory);
  } catch {
    // No such directory (the usual case), or one not empty: nothing more to do.
  }
}

/** The cache directory found for each config file, and whether the old one was removed. */
const cacheDirectoryByConfig = new Map<string, string | undefined>();
let temporaryCacheRemoved = false;

/**
 * Imports a TypeScript file with jiti: it strips types in JavaScript (no native binary to install,
 * unlike esbuild) and loads `.ts` in a project with or without `"type": "module"`. What the file
 * imports from packages is imported natively, so `@crewline/runtime` in the config is the same module
 * instance the CLI uses (Flow subclasses, tools, the registry). Files with decorators are compiled
 * by TypeScript first (see standardDecoratorsTransform): jiti alone gives flows no decorator metadata.
 */
export async function importWithJiti(path: string): Promise<unknown> {
  const { createJiti } = await import('jiti');
  if (!temporaryCacheRemoved) {
    temporaryCacheRemoved = true;
    removeTemporaryCompiledCache();
  }
  if (!cacheDirectoryByConfig.has(path)) cacheDirectoryByConfig.set(path, compiledCacheDirectory(path));
  const plain = createJiti(import.meta.url, { interopDefault: false, fsCache: false });
  return createJiti(import.meta.url, {
    interopDefault: false,
    // The transform keeps its own cache, keyed by what the output depends on; jiti's is keyed by
    // the file's source alone.
    fsCache: false,
    transform: standardDecoratorsTransform(plain, cacheDirectoryByConfig.get(path)),
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
