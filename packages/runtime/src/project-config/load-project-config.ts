import { dirname, isAbsolute, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CrewlineError } from '@crewline/events';
import { findProjectConfigFile } from './config-file.js';
import { type ProjectConfig, registerProject } from './project-config.js';
import { checkProjectConfig } from './project-config-schema.js';

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
    throw new CrewlineError('runtime', 'invalid_config', loadFailure(file, error), { cause: error });
  }
  const exported = unwrapCommonJs(module) as { default?: unknown; config?: unknown } | undefined;
  const config = (exported?.default ?? exported?.config) as ProjectConfig | undefined;
  if (config === undefined) {
    throw new CrewlineError(
      'runtime',
      'invalid_config',
      `${file} has no default export; write export default defineConfig({ tools, models, flows })`,
    );
  }
  // Checked with the file's name before anything is registered: `{ models: 5 }` is refused here.
  checkProjectConfig(config, file);
  if (options.register !== false) registerProject(config);
  return config;
}

/**
 * Why `file` could not be imported, and the fix. A missing package is the usual case in a new project
 * (the CLI installed globally or run with npx, the config's imports not installed beside it); a
 * TypeScript loader is suggested only when node could not read the file's extension.
 */
function loadFailure(file: string, error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const missing = /Cannot find (?:package|module) '([^']+)'/.exec(reason)?.[1];
  if (missing !== undefined && (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')) {
    const directory = dirname(file);
    if (isAbsolute(missing) || missing.startsWith('.')) {
      const shown = isAbsolute(missing) ? `./${relative(directory, missing).split(sep).join('/')}` : missing;
      return `could not load ${file}: it imports ${shown}, which does not exist; fix the import or create the file`;
    }
    const name = missing.startsWith('@') ? missing.split('/').slice(0, 2).join('/') : missing.split('/')[0]!;
    const notInstalled = `could not load ${file}: it imports ${name}, which is not installed where the config lives (${directory})`;
    return name.startsWith('@crewline/')
      ? `${notInstalled}; install @crewline/runtime (and @crewline/worker, for runs) there: npm install @crewline/runtime @crewline/worker`
      : `${notInstalled}; install it there: npm install ${name}`;
  }
  if (code === 'ERR_UNKNOWN_FILE_EXTENSION') {
    return `could not load ${file}: ${reason}; run with a TypeScript loader (node --import tsx) or use the crewline CLI, which loads .ts itself`;
  }
  return `could not load ${file}: ${reason}; fix the file`;
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
