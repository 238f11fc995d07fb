import { fileURLToPath } from 'node:url';
import { bundleChildScript } from '@crewline/test-support/bundle-child-script';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The worker child script, compiled once per test run. */
    workerChild: string;
  }
}

/** Compiles worker-child.ts once per test run (a vitest globalSetup; why: bundle-child-script.ts). */
export default async function setup(project: TestProject): Promise<() => void> {
  const packageDirectory = fileURLToPath(new URL('../..', import.meta.url));
  const { script, remove } = await bundleChildScript({
    packageDirectory,
    name: 'worker-child',
    entry: `${packageDirectory}src/test-support/worker-child.ts`,
    // A restore rebuilds the saved Postgres provider by importing it by name.
    optionalPackages: ['provider-postgres'],
  });
  project.provide('workerChild', script);
  return remove;
}
