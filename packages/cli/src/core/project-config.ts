import {
  accessSync,
  constants,
  lstatSync,
  mkdirSync,
  readdirSync,
  rmdirSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ProjectConfig } from '@crewline/runtime';
import { findProjectConfigFile } from '@crewline/runtime/internal';
import { debugEnabled } from './debug.js';
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

/** What compiledCacheDirectory reads besides the file system; the defaults are this process's. */
export interface CacheDirectoryContext {
  /** The user its directory must belong to: process.getuid(), undefined on Windows (no uid). */
  userId?: number | undefined;
  /** Told why the project's cache is not used: a line on stderr with CREWLINE_DEBUG=1. */
  debug?: (message: string) => void;
}

/** Why `directory` (made when missing, mode 0700) cannot hold code the CLI runs, or undefined. */
function unusableBecause(directory: string, userId: number | undefined): string | undefined {
  try {
    // `.cache` is shared with the other tools, and made as they make it; only ours is 0700.
    mkdirSync(dirname(directory), { recursive: true });
    mkdirSync(directory, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST') return `cannot be created: ${code ?? String(error)}`;
  }
  try {
    // lstat: a symbolic link planted under this name is refused, not followed.
    const status = lstatSync(directory);
    if (status.isSymbolicLink()) return 'a symbolic link';
    if (!status.isDirectory()) return 'not a directory';
    // Windows has no uid and no such mode bits.
    if (userId !== undefined) {
      if (status.uid !== userId) return `owned by uid ${status.uid}`;
      if ((status.mode & 0o022) !== 0) return 'writable by others';
    }
    accessSync(directory, constants.W_OK | constants.X_OK);
  } catch (error) {
    return `cannot be written: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
  }
  return undefined;
}

/** Says `message` on stderr when CREWLINE_DEBUG is set. */
function debugLine(): (message: string) => void {
  return debugEnabled(process.env)
    ? (message) => process.stderr.write(`crewline: debug: ${message}\n`)
    : () => {};
}

/**
 * The directory where the configs compiled for a project are kept between commands:
 * `node_modules/.cache/crewline` in the nearest node_modules directory above the config file, where
 * jiti and Babel keep theirs. The compiled code holds what the source holds (a key written inline in
 * the config too), so it stays in the project's tree, with the project's permissions, and goes with
 * it. A compiled config is code the CLI runs: a directory under that name that is a symbolic link, is
 * owned by another user or that others may write to is not used. When there is no node_modules
 * directory, or its cache cannot be used, undefined: every command compiles again and nothing is
 * written anywhere else (not in the user's home, not under the temporary directory every user
 * shares); a debug line (CREWLINE_DEBUG=1) says why.
 *
 * @param configFile the config file (its directory is where the search starts).
 */
export function compiledCacheDirectory(
  configFile: string,
  context: CacheDirectoryContext = {},
): string | undefined {
  const userId = 'userId' in context ? context.userId : process.getuid?.();
  const debug = context.debug ?? debugLine();
  const project = dirname(resolve(configFile));
  const nodeModules = nearestNodeModules(project);
  if (nodeModules === undefined) {
    debug(
      `no node_modules directory is above ${project}: the config is compiled each time, nothing is cached`,
    );
    return undefined;
  }
  const directory = join(nodeModules, '.cache', 'crewline');
  const refused = unusableBecause(directory, userId);
  if (refused === undefined) return directory;
  debug(
    `the project's cache ${directory} is not usable (${refused}): the config is compiled each time, nothing is cached`,
  );
  return undefined;
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
