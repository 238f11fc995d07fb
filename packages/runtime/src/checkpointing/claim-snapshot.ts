import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityKind, EntitySnapshot } from '@crewline/runtime-state';

/** A crew, agent or flow a flow method's execution started, as its saved execution lists it. */
export interface StartedEntity {
  kind: EntityKind;
  name: string;
  /** Its id in the run (absent in checkpoints written before ids were recorded). */
  id?: string | undefined;
}

/** What the executions the caller runs inside had started when saved, innermost first. */
const startedBefore = new AsyncLocalStorage<readonly (readonly StartedEntity[])[]>();

/**
 * Runs `body` (a flow method's execution run again on resume) so that a crew, agent or flow it
 * kicks off takes up, in order, the saved entities of its kind and name that `started` lists (what
 * the execution had started when the checkpoint was written) before any other saved one of its
 * name. Methods running at the same time start their crews in an order the timing decides, and a
 * resume changes the timing: by name and order alone, they would swap each other's saved work.
 * Nested executions (a method of a flow kicked off in this one) look at their own list first.
 */
export function claimStartedFirst<T>(started: readonly StartedEntity[], body: () => T): T {
  return startedBefore.run([started, ...(startedBefore.getStore() ?? [])], body);
}

/** Which saved snapshots a claim may take, besides kind and name. */
export interface ClaimRules {
  /** Ids the saved executions due to run again had started: left to them by a claim by name. */
  reserved?: ReadonlySet<string>;
  /** Claims by what the caller's executions had started first (default: the caller's context). */
  started?: readonly (readonly StartedEntity[])[];
}

/**
 * Takes out of `unclaimed` the saved snapshot that an entity created inside a restored run takes up.
 * With `key` (a stable key its creator gives), the one saved under that key. Otherwise the first of
 * the saved entities of its kind and name that the execution it is kicked off in had started (see
 * {@link claimStartedFirst}), else the first of its kind and name that no execution due to run
 * again had started: so the n-th crew named X created in the run gets the n-th saved snapshot of X.
 * Each kickoff of one object is an entity of its own (`RuntimeState.keepEarlierKickoff`), saved in
 * the order the kickoffs started, so the n-th kickoff of a crew in a loop gets the n-th kickoff's
 * work. The one rule of a restored run (`Run.takeRestoredSnapshot`) and of a plan of what a
 * continuation would run (`carriedSnapshots`), so that the two cannot hand out snapshots differently.
 */
export function claimSnapshot(
  unclaimed: EntitySnapshot[],
  kind: EntityKind,
  name: string,
  key?: string,
  rules: ClaimRules = {},
): EntitySnapshot | undefined {
  const take = (index: number) => (index < 0 ? undefined : unclaimed.splice(index, 1)[0]);
  if (key !== undefined) {
    return take(
      unclaimed.findIndex(
        (snapshot) =>
          snapshot.kind === kind &&
          snapshot.name === name &&
          (snapshot.data as { restoreKey?: unknown }).restoreKey === key,
      ),
    );
  }
  for (const started of rules.started ?? startedBefore.getStore() ?? []) {
    for (const entity of started) {
      if (entity.kind !== kind || entity.id === undefined) continue;
      const index = unclaimed.findIndex(
        (snapshot) => snapshot.kind === kind && snapshot.name === name && snapshot.id === entity.id,
      );
      if (index >= 0) return take(index);
    }
  }
  return take(
    unclaimed.findIndex(
      (snapshot) => snapshot.kind === kind && snapshot.name === name && !rules.reserved?.has(snapshot.id),
    ),
  );
}

/**
 * Takes out of `unclaimed` the saved snapshot of an entity a flow's saved execution names (a crew its
 * completed method ran): the one saved under its id, or, in a checkpoint written before ids were
 * recorded, the next of its kind and name ({@link claimSnapshot}). The one rule of a restored run
 * (`Run.takeSavedEntity`) and of a continuation's plan (`carriedSnapshots`).
 */
export function claimSavedEntity(
  unclaimed: EntitySnapshot[],
  entity: StartedEntity,
  rules: ClaimRules = {},
): EntitySnapshot | undefined {
  if (entity.id === undefined) return claimSnapshot(unclaimed, entity.kind, entity.name, undefined, rules);
  const index = unclaimed.findIndex((snapshot) => snapshot.kind === entity.kind && snapshot.id === entity.id);
  return index < 0 ? undefined : unclaimed.splice(index, 1)[0];
}
