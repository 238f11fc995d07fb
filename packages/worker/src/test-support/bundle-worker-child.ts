import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The worker child script, compiled once per test run. */
    workerChild: string;
  }
}

const packageDirectory = fileURLToPath(new URL('../..', import.meta.url));

/** Packages the runtime imports by name at run time (a restore rebuilds the saved provider). */
const optionalPackages = ['provider-postgres'];

/**
 * Compiles the worker child and the crewline sources it imports into ESM files once per test run: a
 * child then starts in a fraction of the CPU time of `--import tsx`, which matters when several start
 * at once on a two-core machine. What the children run is the same source. (The fencing e2e app does
 * the same.)
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const directory = `${packageDirectory}node_modules/.worker-e2e/${process.pid}`;
  mkdirSync(directory, { recursive: true });
  await build({
    entryPoints: {
      'worker-child': `${packageDirectory}src/test-support/worker-child.ts`,
      ...Object.fromEntries(
        optionalPackages.map((name) => [
          name,
          `${packageDirectory}node_modules/@crewline/${name}/src/index.ts`,
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
    banner: {
      js: "import { createRequire as createRequire_ } from 'node:module'; const require = createRequire_(import.meta.url);",
    },
    logLevel: 'error',
  });
  for (const name of optionalPackages) {
    const target = `${directory}/node_modules/@crewline/${name}`;
    mkdirSync(target, { recursive: true });
    writeFileSync(
      `${target}/package.json`,
      JSON.stringify({ name: `@crewline/${name}`, type: 'module', exports: './index.mjs' }),
    );
    writeFileSync(`${target}/index.mjs`, `export * from '../../../${name}.mjs';\n`);
  }
  project.provide('workerChild', `${directory}/worker-child.mjs`);
  return () => rmSync(directory, { recursive: true, force: true });
}
