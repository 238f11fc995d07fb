import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The child script, compiled once per test run. */
    childScript: string;
  }
}

const appDirectory = fileURLToPath(new URL('../..', import.meta.url));

/** Provider packages the runtime imports by name at run time (a resume rebuilds the saved provider). */
const optionalPackages = ['provider-sqlite', 'provider-postgres'];

/**
 * Compiles the child script and the crewline sources it imports into ESM files, once per test run:
 * a child then starts in about a third of the CPU time of `--import tsx` (which loads every module
 * through loader hooks), and many start at once on a two-core machine. What the children run is the
 * same source.
 *
 * The provider packages the runtime imports by name are compiled too and placed in a node_modules
 * beside the script, the way an installed package is found; the code they share with the script is
 * split into common chunks, so there is one copy of each module. The files sit in this app's
 * node_modules so that better-sqlite3 (native, left out) resolves from there.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const directory = `${appDirectory}node_modules/.fencing-e2e/${process.pid}`;
  mkdirSync(directory, { recursive: true });
  await build({
    entryPoints: {
      'fencing-child': `${appDirectory}src/children/fencing-child.ts`,
      ...Object.fromEntries(
        optionalPackages.map((name) => [name, `${appDirectory}node_modules/@crewline/${name}/src/index.ts`]),
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
  for (const name of optionalPackages) {
    const packageDirectory = `${directory}/node_modules/@crewline/${name}`;
    mkdirSync(packageDirectory, { recursive: true });
    writeFileSync(
      `${packageDirectory}/package.json`,
      JSON.stringify({ name: `@crewline/${name}`, type: 'module', exports: './index.mjs' }),
    );
    writeFileSync(`${packageDirectory}/index.mjs`, `export * from '../../../${name}.mjs';\n`);
  }
  project.provide('childScript', `${directory}/fencing-child.mjs`);
  return () => rmSync(directory, { recursive: true, force: true });
}
