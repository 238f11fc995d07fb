import type { Lease, LeaseRequest, LeaseToken } from '@crewline/runtime-state';
import type { IdIndexKeeper } from '../id-index/id-index-keeper.js';
import { resolveRoot } from '../paths.js';
import type { LineagePruneView } from '../prune/lineage-prune.js';
import type { LocationReader } from '../read/location-reader.js';
import { claimLineageLock, lockDirectory, releaseLineageLock, renewLineageLock } from './lineage-lock.js';

// The leases of JsonProvider (claimLease, renewLease, releaseLease): a lineage's lock file (see
// lineage-lock.ts), the head of the lineage read through the provider's reader once it is taken.

/** What leases need of the provider. */
export interface LeaseContext {
  reader: LocationReader;
  /** Where the head of a named lineage is looked for (its kept listings spare a read of every file). */
  lineagePrune: LineagePruneView;
  /** Whose queued entries are written before a lock is released. */
  index: IdIndexKeeper;
}

/** `JsonProvider.claimLease`. */
export async function claimLineageLease(
  context: LeaseContext,
  location: string,
  request: LeaseRequest,
): Promise<Lease> {
  const root = resolveRoot(location);
  // The head is read after the lock is taken (see claimLineageLock): for a continued checkpoint,
  // the newer files of its own branch; for a new lineage, the location newest first until one of
  // its files (a new lineage may be on any branch). A random new lineage (a UUID of version 4,
  // what the runtime gives a fresh run or a fork) has none: only a named one (a @persist() state's,
  // version 5, the same in every process) is looked for. It reads every file's head when it has
  // none (a nested @persist() kickoff claims its state's lineage each time, and saves elsewhere):
  // the run of each file read is kept by name with the prune's listings, so the next claim reads
  // only the files written since (see LineagePruneView.newestOf).
  return claimLineageLock(root, request, async (checkpointId) => {
    if (checkpointId !== null) return context.reader.headOf(root, checkpointId, request.lineageId);
    return isRandomUuid(request.lineageId)
      ? null
      : context.lineagePrune.newestOf(root, request.lineageId, lockDirectory(root));
  });
}

/** `JsonProvider.renewLease`. */
export async function renewLineageLease(location: string, token: LeaseToken, ttlMs: number): Promise<Lease> {
  return renewLineageLock(resolveRoot(location), token, ttlMs);
}

/** `JsonProvider.releaseLease`. */
export function releaseLineageLease(context: LeaseContext, location: string, token: LeaseToken): void {
  const root = resolveRoot(location);
  // The next holder asks the id index whether an id is stored: the entries of this holder's
  // writes are in it before the lock is free (see stored-id-check.ts). Both at once, with no
  // await: a release made while a signal ends the process is complete when it is called.
  context.index.writeQueuedSync(root);
  releaseLineageLock(root, token);
}

/** A UUID of version 4 (random): `xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`. */
function isRandomUuid(id: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(id);
}
