import type { EventBus } from '@crewline/events';
import type {
  CheckpointConfigInput,
  CheckpointSetting,
  EntitySnapshot,
  LoadedCheckpoint,
} from '@crewline/runtime-state';
import { validateCheckpointSetting } from '../checkpointing/checkpoint-setting.js';
import { forkBranch } from '../checkpointing/fork-branch.js';
import { Run } from '../checkpointing/run.js';
import { refuseFlowCheckpoint } from '../crew/crew-restore-source.js';
import { type EntityLookup, findEntitySnapshot } from './find-entity-snapshot.js';
import { loadRestoreTarget, restoreOptions } from './load-restore-target.js';
import { resumedCheckpointSetting } from './resumed-setting.js';

/** A checkpoint an entity was restored from, which its next kickoff continues. */
export interface PendingRestore {
  loaded: LoadedCheckpoint;
  /** Set for a fork: the branch it writes on (chosen and checked already). */
  fork?: { branch: string };
  /**
   * The method a re-run runs again (`rerunFrom`): its executions due to run start from scratch, so
   * the work they had started when the save was taken (while it ran beside another method) is not
   * handed back to them; and the new branch it moves to, off a save its run went past, is what it
   * asked for (see `RunOptions.expectNewBranch`).
   */
  rerunFrom?: string;
}

/** What Crew, Agent and Flow tell the restore path about themselves. */
export interface RestoreSubject extends EntityLookup {
  /** Its own checkpoint setting (before the restore). */
  checkpoint: CheckpointSetting;
  /** Who it is in an error about its checkpoint setting (`Crew "research" checkpoint`). */
  owner: string;
  /** Pins which saved state of its name it takes up in a restored run (a crew's `restoreKey`). */
  restoreKey?: string | undefined;
  /** Flows: an own `false` stays off, and a run that did not checkpoint does not start to. */
  offStaysOff?: boolean;
  /** Puts a saved snapshot onto the entity (progress, outputs, state). */
  apply(snapshot: EntitySnapshot): void;
}

/** The outcome of `fromCheckpoint` in a kickoff's options. */
export interface KickoffCheckpoint {
  /** The setting the kickoff runs with. */
  checkpoint: CheckpointSetting;
  /** The checkpoint it continues, when `fromCheckpoint.restoreFrom` named one. */
  restore?: PendingRestore;
}

/**
 * `kickoff({ fromCheckpoint })` of a crew, agent or flow: with `restoreFrom`, loads the checkpoint,
 * puts the entity's snapshot onto it and continues where it was read from; without, the object is the
 * entity's checkpoint config for this kickoff.
 */
export async function kickoffCheckpoint(
  subject: RestoreSubject,
  fromCheckpoint: CheckpointConfigInput | undefined,
  bus: EventBus | undefined,
): Promise<KickoffCheckpoint> {
  if (!fromCheckpoint) return { checkpoint: subject.checkpoint };
  if (fromCheckpoint.restoreFrom === undefined) {
    return { checkpoint: validateCheckpointSetting(fromCheckpoint, subject.owner) };
  }
  const loaded = await loadRestoreTarget(fromCheckpoint.restoreFrom, restoreOptions(fromCheckpoint, bus));
  if (subject.kind === 'crew') refuseFlowCheckpoint(loaded, 'kickoff');
  const snapshot = findEntitySnapshot(loaded, subject);
  subject.apply(snapshot);
  const checkpoint = await resumedCheckpointSetting(subject.checkpoint, fromCheckpoint, loaded, snapshot, {
    offStaysOff: subject.offStaysOff ?? false,
  });
  return { checkpoint, restore: { loaded } };
}

/**
 * An entity kicked off inside a restored run (a crew or agent in a flow method, a flow in another
 * flow's method) takes up the state it had in that run: true when a saved snapshot was applied.
 */
export function joinRestoredRun(
  subject: Pick<RestoreSubject, 'kind' | 'names' | 'restoreKey' | 'apply'>,
  bus: EventBus | undefined,
): boolean {
  const name = subject.names?.[0];
  if (name === undefined) return false;
  const snapshot = Run.current(bus)?.takeRestoredSnapshot(subject.kind, name, subject.restoreKey);
  if (!snapshot) return false;
  subject.apply(snapshot);
  return true;
}

/** What a crew or agent kickoff continues, and the setting it runs with. */
export interface KickoffRestore extends KickoffCheckpoint {
  /** True when it continues saved progress: from a checkpoint, or from the restored run it joined. */
  continuing: boolean;
}

/**
 * The one decision of a kickoff: a checkpoint named in `fromCheckpoint`, else the pending restore of
 * `fromCheckpoint()`/`fork()`, else the entity's saved state in the restored run it joins, else a
 * fresh start.
 */
export async function restoreAtKickoff(
  subject: RestoreSubject,
  request: {
    fromCheckpoint: CheckpointConfigInput | undefined;
    pending: PendingRestore | undefined;
    bus: EventBus | undefined;
  },
): Promise<KickoffRestore> {
  const { checkpoint, restore } = await kickoffCheckpoint(subject, request.fromCheckpoint, request.bus);
  const continued = restore ?? request.pending;
  if (continued) return { checkpoint, restore: continued, continuing: true };
  return { checkpoint, continuing: joinRestoredRun(subject, request.bus) };
}

/**
 * `fromCheckpoint` and `fork` of Crew, Agent and Flow: loads the checkpoint `config.restoreFrom`
 * names and hands it to the class's `rebuild` (which makes the entity, puts its snapshot onto it and
 * keeps the returned pending restore for its next kickoff).
 */
export async function restoreFromCheckpoint<T>(
  config: CheckpointConfigInput,
  call: { bus?: EventBus | undefined },
  rebuild: (loaded: LoadedCheckpoint) => Promise<T>,
): Promise<T> {
  const loaded = await loadRestoreTarget(
    (config as CheckpointConfigInput | null)?.restoreFrom,
    restoreOptions(config ?? {}, call.bus),
  );
  return rebuild(loaded);
}

/**
 * Rebuilds an entity from a loaded checkpoint: finds its snapshot, makes it (`build`), puts the
 * snapshot onto it, picks the setting it continues with, and returns the restore its next kickoff
 * continues (on a new branch for a fork).
 */
export async function rebuildFromCheckpoint<T extends { checkpoint: CheckpointSetting }>(
  loaded: LoadedCheckpoint,
  config: CheckpointConfigInput,
  lookup: EntityLookup & { offStaysOff?: boolean },
  build: (snapshot: EntitySnapshot) => Promise<{ entity: T; apply: (snapshot: EntitySnapshot) => void }>,
  fork?: { branch?: string | undefined },
): Promise<{ entity: T; pending: PendingRestore }> {
  const snapshot = findEntitySnapshot(loaded, lookup);
  const { entity, apply } = await build(snapshot);
  apply(snapshot);
  entity.checkpoint = await resumedCheckpointSetting(entity.checkpoint, config, loaded, snapshot, {
    offStaysOff: lookup.offStaysOff ?? false,
  });
  return { entity, pending: pendingRestore(loaded, fork) };
}

/** The restore of `loaded`, on a fork's branch (given and checked, else generated) when `fork` is set. */
export function pendingRestore(
  loaded: LoadedCheckpoint,
  fork?: { branch?: string | undefined },
): PendingRestore {
  return { loaded, ...(fork ? { fork: { branch: forkBranch(loaded, fork.branch) } } : {}) };
}
