import {
  type ListingWithUnreadable,
  type PruneOptions,
  type PruneResult,
  planPrune,
  pruneOptionsProblem,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { jsonError } from '../errors.js';
import { removeIdIndexEntries } from '../id-index/id-index.js';
import type { IdIndexKeeper } from '../id-index/id-index-keeper.js';
import type { ResolvedJsonProviderOptions } from '../options.js';
import { locationExists, resolveRoot } from '../paths.js';
import type { LocationReader } from '../read/location-reader.js';
import { sweepTempFilesOnce } from '../write/temp-sweep.js';
import type { LineagePruneView } from './lineage-prune.js';
import { removeFiles } from './removal.js';
import { isUnreadableFork, plannedIds, withUnreadableForks } from './unreadable-forks.js';

// The prune of JsonProvider: it waits for the id index entries still being written, removes the
// files its plan names (removal.ts), then their id index entries.

/** What pruning needs of the provider. */
export interface PruneContext {
  options: Readonly<ResolvedJsonProviderOptions>;
  index: IdIndexKeeper;
  reader: LocationReader;
  /** What the prune of one run reads, and remembers between its prunes (see lineage-prune.ts). */
  lineagePrune: LineagePruneView;
  /**
   * The provider's own `listWithUnreadable` (a subclass or a caller may replace it), which the prune
   * of the whole location lists it with.
   */
  listWithUnreadable(location: string): Promise<ListingWithUnreadable>;
}

/** `JsonProvider.prune`. */
export async function pruneLocation(
  context: PruneContext,
  location: string,
  options: PruneOptions,
): Promise<PruneResult> {
  const root = resolveRoot(location);
  assertPruneOptions(options);
  // A standalone checkpoint file is a location to read, never to remove from.
  await locationExists(root);
  await context.index.written(root);
  const plan = await planLocationPrune(context, root, options);
  let removed = plan.removed;
  // A fork may have been written since the plan's listing (its heads take a while to read): the
  // directories are looked at again, by name only, right before the files go, and a checkpoint a
  // file the plan did not know names as parent stays. What a fork writes after this look, having
  // read its parent before, can still lose that parent: only a lock both sides take would close it.
  if (!options.dryRun && removed.length > 0) {
    const forked = await plan.forkedSince(removed.map((entry) => entry.id));
    if (forked.size > 0) removed = removed.filter((entry) => !forked.has(entry.id));
  }
  // A prune always leaves each run its newest checkpoint, so it never empties a directory.
  if (!options.dryRun) {
    await removeFiles(
      removed.map((entry) => entry.reference),
      context.options.fsync,
    );
    await removeIdIndexEntries(
      root,
      removed.map((entry) => entry.id),
    );
  }
  return { removed, dryRun: options.dryRun ?? false };
}

/** What a prune removes, and how to find, right before it does, which of those a fork written since names. */
interface PrunePlan {
  removed: StoredCheckpoint[];
  /** Of `removing`, the ids some checkpoint file the plan did not know names as parent now. */
  forkedSince(removing: readonly string[]): Promise<Set<string>>;
}

/**
 * What a prune removes. The prune of one run this provider wrote (what `maxCheckpoints` asks after
 * each write) reads that run's branch and the checkpoints linked to its own (see
 * lineage-prune.ts); any other prune lists the whole location: fork points are found across runs
 * and branches.
 */
async function planLocationPrune(
  context: PruneContext,
  root: string,
  options: PruneOptions,
): Promise<PrunePlan> {
  const { reader, lineagePrune } = context;
  const { lineageId } = options;
  const branch =
    lineageId === undefined ? undefined : (options.branch ?? lineagePrune.branchOf(root, lineageId));
  if (lineageId === undefined || branch === undefined) {
    // A file that cannot be read still names its parent: counted as a fork of it, so that parent
    // stays (see withUnreadableForks); what this listing leaves out is logged as list() does.
    const listing = await context.listWithUnreadable(root);
    for (const file of listing.unreadable) reader.reportUnreadable(file.reference, file.reason);
    const candidates = withUnreadableForks(listing.checkpoints, listing.unreadable);
    const known = plannedIds(candidates);
    return {
      removed: readableOnly(planPrune(candidates, options)),
      forkedSince: async (removing) => {
        const wanted = new Set(removing);
        const forked = new Set<string>();
        for (const found of (await reader.walk(root, undefined)).checkpoints)
          if (found.parentId !== null && wanted.has(found.parentId) && !known.has(found.id))
            forked.add(found.parentId);
        return forked;
      },
    };
  }
  if (!(await locationExists(root))) return { removed: [], forkedSince: async () => new Set() };
  await sweepTempFilesOnce(root);
  // Scoped to that branch: a checkpoint of the run stored on another one (by hand) may be among
  // the candidates, as the parent or a child of one of its own; that branch was not read, so such
  // a checkpoint is neither removed nor counted among the run's newest.
  const candidates = await lineagePrune.candidates(root, lineageId, branch);
  const known = plannedIds(candidates);
  return {
    removed: readableOnly(planPrune(candidates, { ...options, branch })),
    forkedSince: (removing) => lineagePrune.forkedSince(root, branch, removing, known),
  };
}

/**
 * What a prune plan removes, without the unreadable files it was given as forks: each is alone in a
 * run of its own, so the plan never picks one; filtered all the same, as they are no stored checkpoint.
 */
function readableOnly(removed: StoredCheckpoint[]): StoredCheckpoint[] {
  return removed.some(isUnreadableFork) ? removed.filter((entry) => !isUnreadableFork(entry)) : removed;
}

/** Throws `invalid_argument` for a `keep` below 1, fractional or NaN, or an invalid `olderThan`. */
function assertPruneOptions(options: PruneOptions): void {
  const problem = pruneOptionsProblem(options);
  if (problem !== undefined) throw jsonError('invalid_argument', problem);
}
