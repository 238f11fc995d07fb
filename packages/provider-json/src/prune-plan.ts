import { type PruneOptions, pruneOptionsProblem } from '@crewline/runtime-state';
import { jsonError } from './errors.js';

/** Throws `invalid_argument` for a `keep` below 1, fractional or NaN, or an invalid `olderThan`. */
export function assertPruneOptions(options: PruneOptions): void {
  const problem = pruneOptionsProblem(options);
  if (problem !== undefined) throw jsonError('invalid_argument', problem);
}
