import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

export interface ChildScriptOptions {
  /** The directory (ending in `/`) of the package whose tests start the children. */
  packageDirectory: string;
  /** The script's file name without extension, e.g. `worker-child`. */
  name: string;
  /** The script's TypeScript source. */
  entry: string;
  /**
   * Crewline packages the runtime imports by name at run time (a resume rebuilds the saved provider),
   * e.g. `provider-postgres`; each must be a dependency of the package at `packageDirectory`.
   */
  optionalPackages: readonly string[];
}

/** The compiled script and how to remove it after the test run. */
export interface ChildScript {
  script: string;
  remove(): void;
}

/**
 * Compiles a child script and the crewline sources it imports into ESM files, once per test run (a
 * vitest globalSetup calls this): a child then starts in about a third of the CPU time of
 * `--import tsx` (which loads every module through loader hooks), and many start at once on a
 * two-core machine. What the children run is the same source.
 *
 * The packages the runtime imports by name are compiled too and placed in a node_modules beside the
 * script, the way an installed package is found; the code they share with the script is split into
 * common chunks, so there is one copy of each module. The files sit in the package's node_modules so
 * that better-sqlite3 (native, left out) resolves from there.
 */
export async function bundleChildScript(options: ChildScriptOptions): Promise<ChildScript> {
  const { packageDirectory, name, optionalPackages } = options;
  const directory = `${packageDirectory}node_modules/.child-scripts/${name}-${process.pid}`;
  mkdirSync(directory, { recursive: true });
  await build({
    entryPoints: {
      [name]: options.entry,
      ...Object.fromEntries(
        optionalPackages.map((optional) => [
          optional,
          `${packageDirectory}node_modules/@crewline/${optional}/src/index.ts`,
        ]),
      ),
    },
    outdir: directory,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@crewline/source'],
    external: ['better-sqlite3', 'pg-native'],
    // CommonJS dependencies inside an ESM bundle still call require() for Node's built-ins.
    banner: {
      js: "import { createRequire as createRequire_ } from 'node:module'; const require = createRequire_(import.meta.url);",
    },
    logLevel: 'error',
  });
  for (const optional of optionalPackages) {
    const target = `${directory}/node_modules/@crewline/${optional}`;
    mkdirSync(target, { recursive: true });
    writeFileSync(
      `${target}/package.json`,
      JSON.stringify({ name: `@crewline/${optional}`, type: 'module', exports: './index.mjs' }),
    );
    writeFileSync(`${target}/index.mjs`, `export * from '../../../${optional}.mjs';\n`);
  }
  return {
    script: `${directory}/${name}.mjs`,
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}
