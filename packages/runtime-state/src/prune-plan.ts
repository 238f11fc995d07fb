import type { PruneOptions } from './provider.js';

/** What {@link planPrune} needs to know of each stored checkpoint. */
export interface PruneCandidate {
  id: string;
  createdAt: string;
  lineageId: string;
  parentId: string | null;
  branch: string;
}

/**
 * The checkpoints a prune removes, oldest first: the one retention rule every provider applies, so
 * that JSON, SQLite and third-party stores agree on what "keep N" means.
 *
 * Retention counts **per run** (lineage), never per branch: separate runs that share a branch name
 * (every run writes to `main` by default) each keep their own newest N, so one run's
 * `maxCheckpoints` can never remove another run's checkpoints. Within the runs in scope (all, or
 * those on `options.branch`, or the one `options.lineageId`), a checkpoint goes when it is beyond
 * its run's newest `keep` AND created before `olderThan`; with one option that option alone decides;
 * with neither nothing goes. Never removed, whatever the options:
 * - a run's newest checkpoint, and every checkpoint of a run that nothing of the same run continues
 *   (a second head left by resuming an older checkpoint), so every run stays resumable;
 * - a fork point: a checkpoint that a checkpoint of another run names as its parent, so a fork's
 *   origin stays in the tree;
 * - a fork start: a checkpoint whose parent is a checkpoint of another run (a fork's first write).
 *   It is the one link from a fork to its origin: were the fork's own retention to remove it, no
 *   stored checkpoint would name the fork point any more, the origin's retention would remove that
 *   next, and the fork could not be placed in the tree from storage. Kept, it keeps the fork point
 *   for as long as any checkpoint of the fork (or of forks of it, whose fork points are kept the same
 *   way) is stored, and every reader that nests a fork under the parent of its first checkpoint (the
 *   TUI, the explorer) still finds it. The cost is one checkpoint per fork beyond `keep`; rewriting
 *   the parent of the fork's next checkpoint instead would change what was stored (a checkpoint
 *   would claim a parent it was not continued from, and shares no events with).
 *
 * `all` must hold every checkpoint of the location (fork points are found across runs and
 * branches); it need not be sorted. A caller pruning one run may instead give that run's
 * checkpoints, the checkpoints of other runs that name one of them as parent, and the parents in
 * other runs of its own (its fork starts). Options are assumed valid (see
 * {@link pruneOptionsProblem}).
 */
export function planPrune<T extends PruneCandidate>(all: readonly T[], options: PruneOptions): T[] {
  if (options.keep === undefined && options.olderThan === undefined) return [];
  const continued = new Set<string>();
  const forkPoints = new Set<string>();
  const forkStarts = new Set<string>();
  const lineageOf = new Map<string, string>();
  for (const entry of all) lineageOf.set(entry.id, entry.lineageId);
  for (const entry of all) {
    if (entry.parentId === null) continue;
    const parentLineage = lineageOf.get(entry.parentId);
    if (parentLineage === undefined) continue;
    if (parentLineage === entry.lineageId) continued.add(entry.parentId);
    else {
      forkPoints.add(entry.parentId);
      forkStarts.add(entry.id);
    }
  }
  const runs = new Map<string, T[]>();
  for (const entry of all) {
    if (options.branch !== undefined && entry.branch !== options.branch) continue;
    if (options.lineageId !== undefined && entry.lineageId !== options.lineageId) continue;
    const run = runs.get(entry.lineageId);
    if (run) run.push(entry);
    else runs.set(entry.lineageId, [entry]);
  }
  const keep = options.keep ?? 1;
  const cutoff = options.olderThan?.getTime();
  const removed: T[] = [];
  for (const run of runs.values()) {
    run.sort(oldestFirst);
    const beyondKeep = run.length - keep;
    for (let index = 0; index < beyondKeep; index += 1) {
      const entry = run[index]!;
      if (!continued.has(entry.id) || forkPoints.has(entry.id) || forkStarts.has(entry.id)) continue;
      if (cutoff !== undefined && !(Date.parse(entry.createdAt) < cutoff)) continue;
      removed.push(entry);
    }
  }
  return removed.sort(oldestFirst);
}

/** Why prune options are invalid (for an `invalid_argument` error), or undefined when they are fine. */
export function pruneOptionsProblem(options: PruneOptions): string | undefined {
  if (options.keep !== undefined && (!Number.isInteger(options.keep) || options.keep < 1)) {
    return `prune keep must be a whole number of at least 1 (each run keeps its latest checkpoint), got ${String(options.keep)}`;
  }
  if (
    options.olderThan !== undefined &&
    !(options.olderThan instanceof Date && !Number.isNaN(options.olderThan.getTime()))
  ) {
    return 'prune olderThan must be a valid Date';
  }
  return undefined;
}

// Ids sort in creation order: the order every provider lists in and `latest` picks by.
function oldestFirst(left: PruneCandidate, right: PruneCandidate): number {
  return left.id < right.id ? -1 : left.id > right.id ? 1 : 0;
}
