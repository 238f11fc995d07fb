import { pathToFileURL } from 'node:url';
import { CrewlineError } from '@crewline/events';
import { findProjectConfigFile } from './config-file.js';
import { type ProjectConfig, registerProject } from './project-config.js';

export interface LoadProjectConfigOptions {
  /** The project directory. Default: `process.cwd()`. */
  cwd?: string;
  /**
   * Imports the config file (e.g. through tsx or jiti for `.ts` files in a compiled CLI). Default: the
   * runtime's own `import()`, which handles `.ts` when Node runs with a TypeScript loader.
   */
  importModule?: (path: string) => Promise<unknown>;
  /** Also register what the file names for the whole process. Default `true`. */
  register?: boolean;
}

/**
 * Finds and imports the project's `crewline.config.ts` (or `.mts`, `.js`, `.mjs`) and registers it.
 * Returns `undefined` when the project has none. The path comes from the project directory, never
 * from a checkpoint.
 */
export async function loadProjectConfig(
  options: LoadProjectConfigOptions = {},
): Promise<ProjectConfig | undefined> {
  const file = findProjectConfigFile(options.cwd ?? process.cwd());
  if (!file) return undefined;
  const importModule = options.importModule ?? ((path: string) => import(pathToFileURL(path).href));
  let module: unknown;
  try {
    module = await importModule(file);
  } catch (error) {
    throw new CrewlineError(
      'runtime',
      'invalid_config',
      `could not load ${file}: ${error instanceof Error ? error.message : String(error)}; fix the file or run with a TypeScript loader (node --import tsx)`,
      { cause: error },
    );
  }
  const exported = unwrapCommonJs(module) as { default?: unknown; config?: unknown } | undefined;
  const config = (exported?.default ?? exported?.config) as ProjectConfig | undefined;
  if (config === null || typeof config !== 'object') {
    throw new CrewlineError(
      'runtime',
      'invalid_config',
      `${file} has no default export; write export default defineConfig({ tools, models, flows })`,
    );
  }
  if (options.register !== false) registerProject(config);
  return config;
}

/**
 * A config compiled to CommonJS (a project without `"type": "module"`, or tsx loading `.ts` as
 * CommonJS) arrives from `import()` as `{ default: { __esModule: true, default: config } }`: the
 * namespace's default is `module.exports`. Hands back `module.exports`, whose `default` is the config.
 */
function unwrapCommonJs(module: unknown): unknown {
  const inner = (module as { default?: unknown } | undefined)?.default as
    | { __esModule?: unknown; default?: unknown }
    | undefined;
  if (inner !== null && typeof inner === 'object' && inner.__esModule === true && 'default' in inner)
    return inner;
  return module;
}
