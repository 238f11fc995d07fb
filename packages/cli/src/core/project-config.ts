import { createHash } from 'node:crypto';
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
import { homedir, tmpdir, userInfo } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
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

/** What compiledCacheDirectory reads besides the file system; the defaults are this process's. */
export interface CacheDirectoryContext {
  /** The user its directories must belong to: process.getuid(), undefined on Windows (no uid). */
  userId?: number | undefined;
  /** XDG_CACHE_HOME and CREWLINE_DEBUG are read from it: process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The user's home directory: os.homedir(). */
  home?: string;
  /** The system's temporary directory, shared by every user: nothing is cached under it. */
  temporaryDirectory?: string;
  /** Told why the project's cache, or the user's, is not used: a line on stderr with CREWLINE_DEBUG=1. */
  debug?: (message: string) => void;
}

/** Why `directory` (made when missing, mode 0700) cannot hold code the CLI runs, or undefined. */
function unusableBecause(directory: string, userId: number | undefined): string | undefined {
  try {
    mkdirSync(directory, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST') return `it cannot be made (${code ?? String(error)})`;
  }
  try {
    // lstat: a symbolic link planted under this name is refused, not followed.
    const status = lstatSync(directory);
    if (status.isSymbolicLink()) return 'it is a symbolic link';
    if (!status.isDirectory()) return 'it is not a directory';
    // Windows has no uid and no such mode bits.
    if (userId !== undefined) {
      if (status.uid !== userId) return `it is owned by uid ${status.uid}, not this user (uid ${userId})`;
      if ((status.mode & 0o022) !== 0) return 'others may write to it';
    }
    accessSync(directory, constants.W_OK | constants.X_OK);
  } catch (error) {
    return `it cannot be used (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  return undefined;
}

/** True when `path` is `directory` or under it. */
function isInside(directory: string, path: string): boolean {
  const rest = relative(resolve(directory), resolve(path));
  return rest === '' || (!rest.startsWith('..') && !isAbsolute(rest));
}

/** Says `message` on stderr when CREWLINE_DEBUG is set (as the error boundary reads it). */
function debugLine(env: Readonly<Record<string, string | undefined>>): (message: string) => void {
  const debug = env.CREWLINE_DEBUG !== undefined && env.CREWLINE_DEBUG !== '' && env.CREWLINE_DEBUG !== '0';
  return debug ? (message) => process.stderr.write(`crewline: debug: ${message}\n`) : () => {};
}

/**
 * The directory where the configs compiled for a project are kept between commands, or undefined
 * when none can be used (every command compiles again).
 *
 * First `node_modules/.cache/crewline` in the nearest node_modules directory above the config file,
 * where jiti and Babel keep theirs: the compiled code holds what the source holds (a key written
 * inline in the config too), so it stays in the project's tree and goes with it. When there is no
 * node_modules directory, or that one cannot be used (node_modules installed by root and the CLI run
 * by another user, as in a container; a directory left by `sudo crewline`; a checkout shared by two
 * users; Yarn Plug'n'Play), the user's own cache is used: `${XDG_CACHE_HOME:-~/.cache}/crewline/<digest
 * of the project's path>`, directories of mode 0700, so that such a project is not compiled again on
 * every command (about 0.45 s each). Never under the temporary directory, shared by every user. A
 * compiled config is code the CLI runs: a directory that is a symbolic link, is owned by another user
 * or that others may write to is not used. Why a directory was passed over is a debug line
 * (CREWLINE_DEBUG=1).
 *
 * @param configFile the config file (its directory is where the search starts, and the project).
 */
export function compiledCacheDirectory(
  configFile: string,
  context: CacheDirectoryContext = {},
): string | undefined {
  const userId = 'userId' in context ? context.userId : process.getuid?.();
  const env = context.env ?? process.env;
  const debug = context.debug ?? debugLine(env);
  const project = dirname(resolve(configFile));
  const nodeModules = nearestNodeModules(project);
  let skipped: string;
  if (nodeModules === undefined) {
    skipped = `no node_modules directory is above ${project}`;
  } else {
    const directory = join(nodeModules, '.cache', 'crewline');
    try {
      // `.cache` is shared with the other tools, and made as they make it; only ours is 0700.
      mkdirSync(dirname(directory), { recursive: true });
    } catch {
      // Reported below, as the directory in it cannot be made either.
    }
    const refused = unusableBecause(directory, userId);
    if (refused === undefined) return directory;
    skipped = `the project's cache ${directory} is not used: ${refused}`;
  }
  const xdgCacheHome = env.XDG_CACHE_HOME;
  // The XDG specification ignores a relative XDG_CACHE_HOME.
  const base =
    xdgCacheHome !== undefined && isAbsolute(xdgCacheHome)
      ? xdgCacheHome
      : join(context.home ?? homedir(), '.cache');
  const temporaryDirectory = context.temporaryDirectory ?? tmpdir();
  if (isInside(temporaryDirectory, base)) {
    debug(
      `${skipped}; nor the user's cache ${base}, under the temporary directory ${temporaryDirectory}: compiled each time`,
    );
    return undefined;
  }
  const ours = join(base, 'crewline');
  const directory = join(ours, createHash('sha256').update(project).digest('hex').slice(0, 32));
  try {
    mkdirSync(base, { recursive: true, mode: 0o700 });
  } catch {
    // Reported below, as the directories in it cannot be made either.
  }
  // Both levels: whoever can replace what is in `crewline` can replace the project's directory.
  for (const level of [ours, directory]) {
    const refused = unusableBecause(level, userId);
    if (refused !== undefined) {
      debug(`${skipped}; nor the user's cache ${level}: ${refused}: compiled each time`);
      return undefined;
    }
  }
  debug(`${skipped}; using the user's cache ${directory}`);
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
