import type { EntityKind, EntitySnapshot } from '@crewline/runtime-state';

/**
 * Takes out of `unclaimed` the saved snapshot that an entity created inside a restored run takes up:
 * the first of its kind and name (the one saved under `key`, when its creator gives a stable key),
 * so the n-th crew named X created in the run gets the n-th saved snapshot of X. Each kickoff of one
 * object is an entity of its own (`RuntimeState.keepEarlierKickoff`), saved in the order the kickoffs
 * started, so the n-th kickoff of a crew in a loop gets the n-th kickoff's work. The one rule of a
 * restored run (`Run.takeRestoredSnapshot`) and of a plan of what a continuation would run
 * (`carriedSnapshots`), so that the two cannot hand out snapshots differently.
 */
export function claimSnapshot(
  unclaimed: EntitySnapshot[],
  kind: EntityKind,
  name: string,
  key?: string,
): EntitySnapshot | undefined {
  const index = unclaimed.findIndex(
    (snapshot) =>
      snapshot.kind === kind &&
      snapshot.name === name &&
      (key === undefined || (snapshot.data as { restoreKey?: unknown }).restoreKey === key),
  );
  if (index < 0) return undefined;
  const [snapshot] = unclaimed.splice(index, 1);
  return snapshot;
}
