import type { PruneOptions, StoredCheckpoint } from '@crewline/runtime-state';
import { jsonError } from './errors.js';

/** Throws `invalid_argument` for a negative, fractional or NaN `keep` or an invalid `olderThan`. */
export function assertPruneOptions(options: PruneOptions): void {
  if (options.keep !== undefined && (!Number.isInteger(options.keep) || options.keep < 0)) {
    throw jsonError(
      'invalid_argument',
      `prune keep must be a whole number of at least 0, got ${String(options.keep)}`,
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
 * The checkpoints a prune removes, oldest first: per branch, all but the newest `keep`, and every
 * one created before `olderThan` (either rule selects). `listed` is sorted oldest first.
 */
export function selectForPrune(
  listed: readonly StoredCheckpoint[],
  options: PruneOptions,
): StoredCheckpoint[] {
  const byBranch = new Map<string, StoredCheckpoint[]>();
  for (const entry of listed) byBranch.set(entry.branch, [...(byBranch.get(entry.branch) ?? []), entry]);
  const removed: StoredCheckpoint[] = [];
  const cutoff = options.olderThan?.getTime();
  for (const entries of byBranch.values()) {
    entries.forEach((entry, index) => {
      const beyondKeep = options.keep !== undefined && index < entries.length - options.keep;
      const tooOld = cutoff !== undefined && Date.parse(entry.createdAt) < cutoff;
      if (beyondKeep || tooOld) removed.push(entry);
    });
  }
  return removed.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
