import { lstatSync, mkdirSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
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
 * The directory where this user's compiled configs are kept between commands:
 * `<tmpdir>/crewline-compiled-<uid>`, created with mode 0700. A compiled config is code the CLI runs,
 * so a directory that someone else owns or may write to is not used (undefined: every command
 * compiles again); the shared temporary directory lets any user create that name first.
 *
 * @param parent the directory it is made in; defaults to the system's temporary directory.
 */
export function compiledCacheDirectory(parent: string = tmpdir()): string | undefined {
  const userId = process.getuid?.();
  const directory = join(parent, `crewline-compiled-${userId ?? userInfo().username}`);
  try {
    mkdirSync(directory, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
  }
  try {
    // lstat: a symbolic link planted under this name is refused, not followed.
    const status = lstatSync(directory);
    if (!status.isDirectory()) return undefined;
    // Windows has no uid and no such mode bits: the user's own temporary directory protects it.
    if (userId !== undefined && (status.uid !== userId || (status.mode & 0o022) !== 0)) return undefined;
  } catch {
    return undefined;
  }
  return directory;
}

let compiledCache: { directory: string | undefined } | undefined;

/**
 * Imports a TypeScript file with jiti: it strips types in JavaScript (no native binary to install,
 * unlike esbuild) and loads `.ts` in a project with or without `"type": "module"`. What the file
 * imports from packages is imported natively, so `@crewline/runtime` in the config is the same module
 * instance the CLI uses (Flow subclasses, tools, the registry). Files with decorators are compiled
 * by TypeScript first (see standardDecoratorsTransform): jiti alone gives flows no decorator metadata.
 */
export async function importWithJiti(path: string): Promise<unknown> {
  const { createJiti } = await import('jiti');
  compiledCache ??= { directory: compiledCacheDirectory() };
  const plain = createJiti(import.meta.url, { interopDefault: false, fsCache: false });
  return createJiti(import.meta.url, {
    interopDefault: false,
    // The transform keeps its own cache, keyed by what the output depends on; jiti's is keyed by
    // the file's source alone.
    fsCache: false,
    transform: standardDecoratorsTransform(plain, compiledCache.directory),
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
