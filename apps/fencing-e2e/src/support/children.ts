import { type Child, startChild as startNodeChild } from '@crewline/test-support/children';
import { inject } from 'vitest';
import type {} from './bundle-child.js';

export { type Child, type ChildExit, resultOf } from '@crewline/test-support/children';

/** Starts the child script (src/children/fencing-child.ts) with `args` in a new Node process. */
export function startChild(args: readonly string[], environment: NodeJS.ProcessEnv = {}): Child {
  return startNodeChild(inject('childScript'), args, environment);
}
