import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

let tsxRegistered = false;

function unknownExtension(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_UNKNOWN_FILE_EXTENSION';
}

/**
 * Imports a project file, TypeScript included. Node imports `.js`/`.mjs` itself; for `.ts` the tsx
 * loader is registered once for the process (unless one is active already, as under `--import tsx`).
 * A global registration rather than `tsImport`'s namespaced one keeps `@crewline/runtime` imported by
 * the config the same module instance the CLI uses, so what the config registers is seen by resume.
 */
export async function importProjectModule(path: string): Promise<unknown> {
  const url = pathToFileURL(path).href;
  try {
    return await import(url);
  } catch (error) {
    if (!unknownExtension(error) || tsxRegistered) throw error;
  }
  const { register } = await import('tsx/esm/api');
  register();
  tsxRegistered = true;
  return import(url);
}

let loaded: Promise<string | undefined> | undefined;

/** Config file names the runtime looks for, in order (kept in step with its `loadProjectConfig`). */
const configFiles = [
  'crewline.config.ts',
  'crewline.config.mts',
  'crewline.config.js',
  'crewline.config.mjs',
];

/**
 * Loads and registers the project's `crewline.config.ts` from `cwd` (once per process) so that
 * resume, fork and the browser can rebuild custom tools, models and flows. Resolves to the file
 * loaded, or undefined when the project has none.
 */
export function loadProject(cwd: string): Promise<string | undefined> {
  loaded ??= (async () => {
    const file = configFiles.map((name) => `${cwd}/${name}`).find((path) => existsSync(path));
    if (!file) return undefined;
    const runtime = await import('@crewline/runtime');
    await runtime.loadProjectConfig({ cwd, importModule: importProjectModule });
    return file;
  })();
  return loaded;
}

/** Forgets which project was loaded (tests load several). */
export function forgetLoadedProject(): void {
  loaded = undefined;
}
