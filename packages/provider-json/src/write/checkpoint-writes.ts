import type { CheckpointWrite, StoredCheckpoint } from '@crewline/runtime-state';
import { isSameCheckpoint, storedIdConflict } from '@crewline/runtime-state/internal';
import { component } from '../errors.js';
import { assertHoldsLineageLock } from '../leases/lineage-lock.js';
import { locationExistsSync, resolveRoot } from '../paths.js';
import type { LineagePruneView } from '../prune/lineage-prune.js';
import type { IdReservations } from './id-reservations.js';
import {
  type PlacementContext,
  placeCheckpoint,
  placeCheckpointSync,
  placeCheckpoints,
} from './place-checkpoints.js';
import { assertGroupNotStored, storedUnderId } from './stored-id-check.js';
import { sweepTempFilesOnce, sweepTempFilesOnceSync } from './temp-sweep.js';
import { planWrite } from './write-plan.js';

// The write paths of JsonProvider (writeSync, write, writeBatch): each checks what it is given (its
// size, its lease, its location), makes sure its id is free (stored-id-check.ts, and the ids the
// provider's other writes hold: id-reservations.ts), then puts its files in place
// (place-checkpoints.ts) and tells the prune of its run what it wrote (lineage-prune.ts).

/** What writing needs of the provider: what putting files in place needs, and more. */
export interface WriteContext extends PlacementContext {
  /** The ids being written now, so that two writes of one id do not both find it free. */
  reservations: IdReservations;
  /** Told of each checkpoint written, for the prune of its run. */
  lineagePrune: LineagePruneView;
}

/** `JsonProvider.writeSync`: the file and its id index entry are written when it returns. */
export function storeCheckpointFileSync(
  context: WriteContext,
  location: string,
  checkpoint: CheckpointWrite,
): StoredCheckpoint {
  const { options, index, reservations, lineagePrune } = context;
  const root = resolveRoot(location);
  const plan = planWrite(root, checkpoint, options.maxCheckpointBytes);
  if (checkpoint.lease !== undefined) assertHoldsLineageLock(root, checkpoint.lease);
  locationExistsSync(root);
  sweepTempFilesOnceSync(root);
  // An async write in flight holds this id: the same checkpoint written again at once (the
  // runtime's strict checkpoint writes those queued ahead of it) goes to the same file; another
  // one would be a second file under the id.
  const holder = reservations.holderOf(root, plan.metadata.id);
  if (holder !== undefined && !isSameCheckpoint(holder, plan.metadata))
    throw storedIdConflict(component, plan.metadata.id, root);
  const stored =
    storedUnderId(root, index, plan, options.maxCheckpointBytes) ?? placeCheckpointSync(root, plan, context);
  lineagePrune.noteWritten(root, stored);
  return stored;
}

/**
 * `JsonProvider.write`. The checks and directory creation before the file is written are made
 * directly (the kernel answers them from its caches; through the thread pool each would be a round
 * trip a run waiting at its next model call pays).
 */
export async function storeCheckpointFile(
  context: WriteContext,
  location: string,
  checkpoint: CheckpointWrite,
): Promise<StoredCheckpoint> {
  const { options, index, reservations, lineagePrune } = context;
  const root = resolveRoot(location);
  const plan = planWrite(root, checkpoint, options.maxCheckpointBytes);
  if (checkpoint.lease !== undefined) assertHoldsLineageLock(root, checkpoint.lease);
  locationExistsSync(root);
  await sweepTempFilesOnce(root);
  const release = await reservations.hold(root, [plan.metadata]);
  try {
    const stored =
      storedUnderId(root, index, plan, options.maxCheckpointBytes) ??
      (await placeCheckpoint(root, plan, context));
    lineagePrune.noteWritten(root, stored);
    return stored;
  } finally {
    release();
  }
}

/** `JsonProvider.writeBatch`: consecutive checkpoints of one location written as a group. */
export async function storeCheckpointFiles(
  context: WriteContext,
  location: string,
  checkpoints: readonly CheckpointWrite[],
): Promise<StoredCheckpoint[]> {
  const { options, index, reservations, lineagePrune } = context;
  const root = resolveRoot(location);
  const plans = checkpoints.map((checkpoint) => planWrite(root, checkpoint, options.maxCheckpointBytes));
  for (const checkpoint of checkpoints)
    if (checkpoint.lease !== undefined) assertHoldsLineageLock(root, checkpoint.lease);
  locationExistsSync(root);
  await sweepTempFilesOnce(root);
  const release = await reservations.hold(
    root,
    plans.map((plan) => plan.metadata),
  );
  try {
    assertGroupNotStored(root, index, plans);
    const stored = await placeCheckpoints(root, plans, context);
    for (const checkpoint of stored) lineagePrune.noteWritten(root, checkpoint);
    return stored;
  } finally {
    release();
  }
}
