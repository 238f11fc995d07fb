import type { PruneOptions, StoredCheckpoint } from '@crewline/runtime-state';
import { jsonError } from './errors.js';

/** Throws `invalid_argument` for a `keep` below 1, fractional or NaN, or an invalid `olderThan`. */
export function assertPruneOptions(options: PruneOptions): void {
  if (options.keep !== undefined && (!Number.isInteger(options.keep) || options.keep < 1)) {
    throw jsonError(
      'invalid_argument',
      `prune keep must be a whole number of at least 1 (each branch keeps its latest checkpoint), got ${String(options.keep)}`,
    );
  }
  if (
    options.olderThan !== undefined &&
    !(options.olderThan instanceof Date && !Number.isNaN(options.olderThan.getTime()))
  ) {
    throw jsonError('invalid_argument', 'prune olderThan must be a valid Date');
  }
}

/**
 * The checkpoints a prune removes, oldest first. Per branch, a checkpoint goes when it is beyond the
 * newest `keep` AND created before `olderThan`; with one option, that option alone decides. Either
 * way a branch's newest checkpoint stays (`keep` is at least 1, and `olderThan` alone keeps one), so
 * every branch can still be resumed. Without either option nothing is removed. `listed` is sorted
 * oldest first.
 */
export function selectForPrune(
  listed: readonly StoredCheckpoint[],
  options: PruneOptions,
): StoredCheckpoint[] {
  if (options.keep === undefined && options.olderThan === undefined) return [];
  const byBranch = new Map<string, StoredCheckpoint[]>();
  for (const entry of listed) byBranch.set(entry.branch, [...(byBranch.get(entry.branch) ?? []), entry]);
  const removed: StoredCheckpoint[] = [];
  const keep = options.keep ?? 1;
  const cutoff = options.olderThan?.getTime();
  for (const entries of byBranch.values()) {
    entries.forEach((entry, index) => {
      const beyondKeep = index < entries.length - keep;
      const oldEnough = cutoff === undefined || Date.parse(entry.createdAt) < cutoff;
      if (beyondKeep && oldEnough) removed.push(entry);
    });
  }
  return removed.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
