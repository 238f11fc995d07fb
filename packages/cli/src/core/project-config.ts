import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

let tsxRegistered = false;

/** True when node already runs with a TypeScript loader (`pnpm crewline`: `--import tsx`). */
function typeScriptLoaderActive(): boolean {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return flags.some((flag) =>
    /(?:^|[\\/=])tsx(?:$|[\\/])|ts-node|--experimental-(?:strip|transform)-types/.test(flag),
  );
}

/**
 * Imports a project file, TypeScript included. Node imports `.js`/`.mjs` itself; for `.ts`, `.mts`
 * and `.cts` tsx is registered first (its ESM and CommonJS hooks: a project without
 * `"type": "module"` loads `.ts` as CommonJS), unless a TypeScript loader is active already.
 * Registration comes before the first attempt because node caches a failed import of a URL.
 * A global registration rather than `tsImport`'s namespaced one keeps `@crewline/runtime`
 * imported by the config the same module instance the CLI uses (Flow subclasses, tools).
 */
async function importProjectModule(path: string): Promise<unknown> {
  if (/\.[cm]?ts$/.test(path) && !tsxRegistered && !typeScriptLoaderActive()) {
    const [esm, commonJs] = await Promise.all([import('tsx/esm/api'), import('tsx/cjs/api')]);
    esm.register();
    commonJs.register();
    tsxRegistered = true;
  }
  // A config compiled as CommonJS is unwrapped by the runtime's loadProjectConfig.
  return import(pathToFileURL(path).href);
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
