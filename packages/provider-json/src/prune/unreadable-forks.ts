// A checkpoint file that cannot be read but names a parent, given to `planPrune` as a fork of that
// parent so the parent is kept. Split from lineage-prune.ts; the prune of the whole location
// (location-prune.ts) uses it too.
import type { StoredCheckpoint } from '@crewline/runtime-state';
import type { FoundCheckpoint } from '../read/directory-walk.js';

/**
 * A file linked to the run that cannot be read, as a candidate: what its name says (its id, its
 * parent, its branch) and a run of its own, so that `planPrune` counts its parent a fork point and
 * keeps it. Its id is not its own: a checkpoint naming it as parent is treated as before (as the
 * child of a checkpoint not found), not as a fork start. It is alone in its run, so never removed.
 */
export function unreadableFork(found: FoundCheckpoint): StoredCheckpoint {
  return {
    id: `${unreadablePrefix}${found.id}`,
    lineageId: `${unreadablePrefix}${found.path}`,
    parentId: found.parentId,
    branch: found.branch,
    createdAt: '',
  } as StoredCheckpoint;
}

/** Starts the id and run of {@link unreadableFork}: no id or lineage id stored by a run starts with NUL. */
const unreadablePrefix = '\u0000unreadable:';

/** True for a candidate made by {@link unreadableFork}. */
export function isUnreadableFork(candidate: { id: string }): boolean {
  return candidate.id.startsWith(unreadablePrefix);
}

/** The ids a prune plan was made from, an unreadable file's by its name (see {@link unreadableFork}). */
export function plannedIds(candidates: readonly { id: string }[]): Set<string> {
  return new Set(
    candidates.map((candidate) =>
      isUnreadableFork(candidate) ? candidate.id.slice(unreadablePrefix.length) : candidate.id,
    ),
  );
}

/**
 * The candidates a prune of the whole location gives `planPrune`: the checkpoints listed, and the
 * unreadable files that name a parent, as forks of it (see {@link unreadableFork}).
 */
export function withUnreadableForks(
  checkpoints: StoredCheckpoint[],
  unreadable: readonly { id: string; branch: string; parentId?: string | null; reference: string }[],
): StoredCheckpoint[] {
  const forks = unreadable.flatMap((file) =>
    file.parentId == null
      ? []
      : [
          unreadableFork({
            id: file.id,
            branch: file.branch,
            parentId: file.parentId,
            path: file.reference,
            directory: '',
          }),
        ],
  );
  return forks.length === 0 ? checkpoints : [...checkpoints, ...forks];
}
