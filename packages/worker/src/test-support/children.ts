import { type Child, startChild } from '@crewline/test-support/children';
import { inject } from 'vitest';
import type {} from './bundle-worker-child.js';

export type { Child as WorkerChild } from '@crewline/test-support/children';

/** Starts the compiled worker child (worker-child.ts) with `options` in a new Node process. */
export function startWorkerChild(options: object, environment: NodeJS.ProcessEnv = {}): Child {
  return startChild(inject('workerChild'), [JSON.stringify(options)], environment);
}
