import { fileURLToPath } from 'node:url';
import { bundleChildScript } from '@crewline/test-support/bundle-child-script';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The child script, compiled once per test run. */
    childScript: string;
  }
}

/** Compiles src/children/fencing-child.ts once per test run (a vitest globalSetup; why: bundle-child-script.ts). */
export default async function setup(project: TestProject): Promise<() => void> {
  const appDirectory = fileURLToPath(new URL('../..', import.meta.url));
  const { script, remove } = await bundleChildScript({
    packageDirectory: appDirectory,
    name: 'fencing-child',
    entry: `${appDirectory}src/children/fencing-child.ts`,
    // A resume rebuilds the saved provider by importing its package by name.
    optionalPackages: ['provider-sqlite', 'provider-postgres'],
  });
  project.provide('childScript', script);
  return remove;
}
