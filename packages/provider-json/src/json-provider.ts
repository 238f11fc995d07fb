import { statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import {
  type CheckpointProvider,
  type CheckpointWrite,
  type Lease,
  type LeaseRequest,
  type LeaseToken,
  type ListingWithUnreadable,
  type ListQuery,
  PROVIDER_CONTRACT_VERSION,
  type ProviderCapabilities,
  type PruneOptions,
  type PruneResult,
  planPrune,
  type RawCheckpoint,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import {
  isSameCheckpoint,
  missingCheckpointMessage,
  storedIdConflict,
} from '@crewline/runtime-state/internal';
import { readCheckpointText } from './checkpoint-read.js';
import { refuseLinks } from './directory-walk.js';
import { component, jsonError } from './errors.js';
import { assertCheckpointId } from './file-names.js';
import { parseFileReference } from './file-reference.js';
import { removeIdIndexEntries } from './id-index.js';
import { IdIndexKeeper } from './id-index-keeper.js';
import { IdReservations } from './id-reservations.js';
import {
  assertHoldsLineageLock,
  claimLineageLock,
  lockDirectory,
  releaseLineageLock,
  renewLineageLock,
} from './lineage-lock.js';
import { LineagePruneView } from './lineage-prune.js';
import { LocationReader } from './location-reader.js';
import { mapLimited } from './map-limited.js';
import {
  type JsonProviderOptions,
  parseJsonProviderOptions,
  type ResolvedJsonProviderOptions,
} from './options.js';
import { locationExists, locationExistsSync, resolveRoot } from './paths.js';
import {
  type PlacementContext,
  placeCheckpoint,
  placeCheckpointSync,
  placeCheckpoints,
} from './place-checkpoints.js';
import { assertPruneOptions } from './prune-plan.js';
import { removeEmptyDirectories, removeFile, removeFiles } from './removal.js';
import { SerialLane } from './serial-lane.js';
import { SpareFiles } from './spare-files.js';
import { assertGroupNotStored, storedUnderId } from './stored-id-check.js';
import { sweepTempFilesOnce, sweepTempFilesOnceSync } from './temp-sweep.js';
import { isUnreadableFork, plannedIds, withUnreadableForks } from './unreadable-forks.js';
import { planWrite } from './write-plan.js';

/** Files whose heads are read at once while listing (keeps file handles bounded for big locations). */
const listConcurrency = 16;

/**
 * Stores each checkpoint as one self-contained, human-readable JSON file:
 * `<location>/<branch>/<id>_p-<parentId|none>.json` (a branch `fork/x` is a nested directory).
 * Writes are atomic and durable (temp file, fsync, rename, fsync the directory); names never escape
 * the location; listing reads only the first lines of each file.
 */
export class JsonProvider implements CheckpointProvider {
  readonly kind = 'json';
  readonly contractVersion = PROVIDER_CONTRACT_VERSION;
  // Background writes: a write is mostly its fsyncs, which the run need not wait for event by event.
  readonly capabilities: ProviderCapabilities = {
    syncWrite: true,
    incremental: false,
    leases: false,
    backgroundWrites: true,
  };
  /** The validated options with defaults applied. */
  readonly options: Readonly<ResolvedJsonProviderOptions>;
  /** What async writes leave to do after they resolve, one task at a time (see serial-lane.ts). */
  readonly #background = new SerialLane();
  /** Async writes not settled yet: {@link close} waits for them before what they leave behind. */
  readonly #writesInFlight = new Set<Promise<unknown>>();
  /** Temp files created ahead for the next async writes (see spare-files.ts); close() removes them. */
  readonly #spares: SpareFiles;
  /** The id index, kept up to date after writes and reads (see id-index-keeper.ts). */
  readonly #index: IdIndexKeeper;
  /** The ids being written now, so that two writes of one id do not both find it free. */
  readonly #reservations = new IdReservations();
  /** What putting files in place needs (see place-checkpoints.ts). */
  readonly #placement: PlacementContext;
  /** Finds and describes the checkpoint files of a location (see location-reader.ts). */
  readonly #reader: LocationReader;
  /** What the prune of one run reads, and remembers between its prunes (see lineage-prune.ts). */
  readonly #lineagePrune: LineagePruneView;

  constructor(options?: JsonProviderOptions) {
    this.options = Object.freeze(parseJsonProviderOptions(options));
    this.#spares = new SpareFiles({
      mode: this.options.fileMode,
      fsync: this.options.fsync,
      lane: this.#background,
    });
    this.#index = new IdIndexKeeper({ modes: this.options, lane: this.#background });
    this.#placement = { options: this.options, spares: this.#spares, index: this.#index };
    this.#reader = new LocationReader({
      maxCheckpointBytes: this.options.maxCheckpointBytes,
      index: this.#index,
    });
    this.#lineagePrune = new LineagePruneView(this.#reader);
  }

  /** The absolute path of the location directory. */
  resolveLocation(location: string): string {
    return resolveRoot(location);
  }

  /**
   * Accepts a checkpoint file path, a location directory (its latest checkpoint), a branch
   * directory (that branch's latest) and `directory#id`. Undefined for anything else.
   *
   * A file reference reads exactly that file, whatever its name or folder: a checkpoint file in its
   * branch directory belongs to that location; any other file (a renamed copy, a file copied out of
   * its location) is a standalone checkpoint, its own read-only location. A checkpoint-shaped file
   * name must name the checkpoint the file holds (`corrupt_checkpoint` otherwise). The returned
   * `checkpoint` lets the core resolve the reference without listing the location, and the file is
   * recorded in the location's id index (when it is writable) so the read that follows opens it by
   * name. A file or branch directory reached through a symbolic link inside its location is refused.
   */
  parseReference(
    reference: string,
  ): { location: string; id?: string; checkpoint?: StoredCheckpoint } | undefined {
    if (typeof reference !== 'string' || reference.length === 0 || reference.includes('\u0000'))
      return undefined;
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(reference)) return undefined;
    const hash = reference.lastIndexOf('#');
    if (hash > 0) {
      const directory = reference.slice(0, hash);
      const id = reference.slice(hash + 1);
      if (!isDirectory(directory)) return undefined;
      const location = this.#reader.rootOfDirectory(resolve(directory))?.location ?? resolve(directory);
      return id === '' ? { location } : { location, id };
    }
    const path = resolve(reference);
    let isFile: boolean;
    try {
      isFile = statSync(path).isFile();
    } catch {
      return undefined;
    }
    if (!isFile) return this.#reader.rootOfDirectory(path) ?? { location: path };
    const file = parseFileReference(path, this.options.maxCheckpointBytes);
    if (!file) return undefined;
    const { id } = file.checkpoint;
    if (file.home === undefined) return { location: path, id, checkpoint: file.checkpoint };
    this.#index.recordSync(
      file.home,
      { id, branch: file.checkpoint.branch, fileName: basename(path) },
      false,
    );
    return { location: file.home, id, checkpoint: file.checkpoint };
  }

  writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    const root = resolveRoot(location);
    const plan = planWrite(root, checkpoint, this.options.maxCheckpointBytes);
    if (checkpoint.lease !== undefined) assertHoldsLineageLock(root, checkpoint.lease);
    locationExistsSync(root);
    sweepTempFilesOnceSync(root);
    // An async write in flight holds this id: the same checkpoint written again at once (the
    // runtime's strict checkpoint writes those queued ahead of it) goes to the same file; another
    // one would be a second file under the id.
    const holder = this.#reservations.holderOf(root, plan.metadata.id);
    if (holder !== undefined && !isSameCheckpoint(holder, plan.metadata))
      throw storedIdConflict(component, plan.metadata.id, root);
    const stored =
      storedUnderId(root, this.#index, plan, this.options.maxCheckpointBytes) ??
      placeCheckpointSync(root, plan, this.#placement);
    this.#lineagePrune.noteWritten(root, stored);
    return stored;
  }

  /**
   * Async {@link writeSync}. The checks and directory creation before the file is written are made
   * directly (the kernel answers them from its caches; through the thread pool each would be a round
   * trip a run waiting at its next model call pays). It resolves once the file is in place and
   * synced; its id index entry is written after that, without the write waiting for it. It uses a
   * spare temp file when a {@link writeBatch} left one ready, and leaves none of its own.
   */
  write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    return this.#tracked(this.#write(location, checkpoint));
  }

  async #write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    const root = resolveRoot(location);
    const plan = planWrite(root, checkpoint, this.options.maxCheckpointBytes);
    if (checkpoint.lease !== undefined) assertHoldsLineageLock(root, checkpoint.lease);
    locationExistsSync(root);
    await sweepTempFilesOnce(root);
    const release = await this.#reservations.hold(root, [plan.metadata]);
    try {
      const stored =
        storedUnderId(root, this.#index, plan, this.options.maxCheckpointBytes) ??
        (await placeCheckpoint(root, plan, this.#placement));
      this.#lineagePrune.noteWritten(root, stored);
      return stored;
    } finally {
      release();
    }
  }

  /**
   * Writes consecutive checkpoints of one location as a group (see `writeFilesAtomic`): their files
   * are written and flushed together, renamed into place in order, their directories synced once. The
   * runtime uses it for the automatic checkpoints that queued up while an earlier write was flushing.
   * Rejects when any of them could not be written; the ones before it may be in place. Like
   * {@link write}, it resolves before their id index entries are written.
   *
   * Afterwards it creates, in the background, spare temp files for the next groups in the last
   * directory it wrote to (twice the largest group so far, at most 8 in all, those of the directory
   * before removed; see spare-files.ts): a run writes a group at each model or tool call and waits
   * for it, and creating the files is, after the fsyncs, the slowest part of that wait. They are hidden temp files; {@link close} removes them, and so does the
   * process when it exits.
   */
  writeBatch(location: string, checkpoints: readonly CheckpointWrite[]): Promise<StoredCheckpoint[]> {
    // A group started after close() makes spares again; one that was in flight then, close() awaited.
    this.#spares.reopen();
    return this.#tracked(this.#writeBatch(location, checkpoints));
  }

  async #writeBatch(location: string, checkpoints: readonly CheckpointWrite[]): Promise<StoredCheckpoint[]> {
    const root = resolveRoot(location);
    const plans = checkpoints.map((checkpoint) =>
      planWrite(root, checkpoint, this.options.maxCheckpointBytes),
    );
    for (const checkpoint of checkpoints)
      if (checkpoint.lease !== undefined) assertHoldsLineageLock(root, checkpoint.lease);
    locationExistsSync(root);
    await sweepTempFilesOnce(root);
    const release = await this.#reservations.hold(
      root,
      plans.map((plan) => plan.metadata),
    );
    try {
      assertGroupNotStored(root, this.#index, plans);
      const stored = await placeCheckpoints(root, plans, this.#placement);
      for (const checkpoint of stored) this.#lineagePrune.noteWritten(root, checkpoint);
      return stored;
    } finally {
      release();
    }
  }

  async read(location: string, id: string): Promise<RawCheckpoint> {
    const root = resolveRoot(location);
    assertCheckpointId(id);
    const path = await this.#reader.pathOf(root, id);
    if (path === undefined) throw jsonError('not_found', missingCheckpointMessage(id, root));
    return { text: await readCheckpointText(root, path, id, this.options.maxCheckpointBytes) };
  }

  async list(location: string, query: ListQuery = {}): Promise<StoredCheckpoint[]> {
    const listing = await this.listWithUnreadable(location, query);
    // What this listing leaves out is said once; listWithUnreadable returns it instead.
    for (const file of listing.unreadable) this.#reader.reportUnreadable(file.reference, file.reason);
    return listing.checkpoints;
  }

  async listWithUnreadable(location: string, query: ListQuery = {}): Promise<ListingWithUnreadable> {
    const root = resolveRoot(location);
    const standalone = await this.#reader.standalone(root, query);
    if (standalone !== undefined) return { checkpoints: standalone, unreadable: [] };
    const found = refuseLinks(root, await this.#reader.walk(root, query.branch));
    const examined = await mapLimited(found, listConcurrency, (entry) => this.#reader.examine(entry));
    const listing: ListingWithUnreadable = { checkpoints: [], unreadable: [] };
    for (const entry of examined) {
      if (entry === undefined) continue;
      if ('unreadable' in entry) {
        // A damaged file's run is unknown: it belongs to no run a query names.
        if (query.lineageId === undefined) listing.unreadable.push(entry.unreadable);
      } else if (query.lineageId === undefined || entry.stored.lineageId === query.lineageId) {
        listing.checkpoints.push(entry.stored);
      }
    }
    return listing;
  }

  async latest(location: string, query: ListQuery = {}): Promise<StoredCheckpoint | undefined> {
    const root = resolveRoot(location);
    const standalone = await this.#reader.standalone(root, query);
    if (standalone !== undefined) return standalone[0];
    const found = refuseLinks(root, await this.#reader.walk(root, query.branch));
    // Newest first, reading heads only until one matches: the latest of 10,000 reads one file.
    for (let index = found.length - 1; index >= 0; index -= 1) {
      const entry = await this.#reader.describe(found[index]!);
      if (entry && (query.lineageId === undefined || entry.lineageId === query.lineageId)) return entry;
    }
    return undefined;
  }

  async prune(location: string, options: PruneOptions): Promise<PruneResult> {
    const root = resolveRoot(location);
    assertPruneOptions(options);
    // A standalone checkpoint file is a location to read, never to remove from.
    await locationExists(root);
    await this.#index.written(root);
    const plan = await this.#planPrune(root, options);
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
        this.options.fsync,
      );
      await removeIdIndexEntries(
        root,
        removed.map((entry) => entry.id),
      );
    }
    return { removed, dryRun: options.dryRun ?? false };
  }

  /**
   * What a prune removes. The prune of one run this provider wrote (what `maxCheckpoints` asks after
   * each write) reads that run's branch and the checkpoints linked to its own (see
   * lineage-prune.ts); any other prune lists the whole location: fork points are found across runs
   * and branches.
   */
  async #planPrune(root: string, options: PruneOptions): Promise<PrunePlan> {
    const { lineageId } = options;
    const branch =
      lineageId === undefined ? undefined : (options.branch ?? this.#lineagePrune.branchOf(root, lineageId));
    if (lineageId === undefined || branch === undefined) {
      // A file that cannot be read still names its parent: counted as a fork of it, so that parent
      // stays (see withUnreadableForks); what this listing leaves out is logged as list() does.
      const listing = await this.listWithUnreadable(root);
      for (const file of listing.unreadable) this.#reader.reportUnreadable(file.reference, file.reason);
      const candidates = withUnreadableForks(listing.checkpoints, listing.unreadable);
      const known = plannedIds(candidates);
      return {
        removed: readableOnly(planPrune(candidates, options)),
        forkedSince: async (removing) => {
          const wanted = new Set(removing);
          const forked = new Set<string>();
          for (const found of (await this.#reader.walk(root, undefined)).checkpoints)
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
    const candidates = await this.#lineagePrune.candidates(root, lineageId, branch);
    const known = plannedIds(candidates);
    return {
      removed: readableOnly(planPrune(candidates, { ...options, branch })),
      forkedSince: (removing) => this.#lineagePrune.forkedSince(root, branch, removing, known),
    };
  }

  /**
   * Locks a lineage for one continuation on this machine (a lock file; see lineage-lock.ts). Files
   * cannot fence across machines, so `capabilities.leases` stays false.
   */
  async claimLease(location: string, request: LeaseRequest): Promise<Lease> {
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
      if (checkpointId !== null) return this.#reader.headOf(root, checkpointId, request.lineageId);
      return isRandomUuid(request.lineageId)
        ? null
        : this.#lineagePrune.newestOf(root, request.lineageId, lockDirectory(root));
    });
  }

  async renewLease(location: string, token: LeaseToken, ttlMs: number): Promise<Lease> {
    return renewLineageLock(resolveRoot(location), token, ttlMs);
  }

  async releaseLease(location: string, token: LeaseToken): Promise<void> {
    const root = resolveRoot(location);
    // The next holder asks the id index whether an id is stored: the entries of this holder's
    // writes are in it before the lock is free (see stored-id-check.ts). Both at once, with no
    // await: a release made while a signal ends the process is complete when it is called.
    this.#index.writeQueuedSync(root);
    releaseLineageLock(root, token);
  }

  /**
   * A run that wrote here ended: removes the spare temp files made ahead for its next writes, those
   * still being created included (as they land), so that its user may remove the location at once
   * and a long-lived process keeps no empty files where runs ended. The next group makes new ones.
   */
  async runEnded(location: string): Promise<void> {
    await this.#spares.forgetUnder(resolveRoot(location));
  }

  async delete(location: string, id: string): Promise<boolean> {
    const root = resolveRoot(location);
    assertCheckpointId(id);
    await this.#index.written(root);
    const found = await this.#reader.locate(root, id);
    if (!found) return false;
    // The directory sync comes after the empty directories are gone, on the one that remains.
    const removed = await removeFile(found.path);
    await removeIdIndexEntries(root, [id]);
    // Spare temp files would keep an emptied branch directory; the next group creates new ones.
    this.#spares.forget(dirname(found.path));
    await removeEmptyDirectories(root, found.branch, this.options.fsync);
    return removed;
  }

  /**
   * Waits for the async writes in flight, then for the id index entries still being written after
   * them, and removes the spare temp files created ahead for the next ones (the process removes
   * them at exit otherwise; the ready ones at once, before it waits, so a process that ends right
   * after calling it leaves none): nothing of a write started before it is written after it resolved. The
   * provider stays usable: a group written after it creates spares again. A caller that removes a
   * location once its writes resolved calls it first, or an entry may be written while it removes.
   */
  async close(): Promise<void> {
    // First, before any await: a process may end in the same turn (the runtime's signal handling
    // closes its providers and raises the signal again at once), and nothing after an await runs then.
    // A write in flight keeps the spare it took; a group in flight makes no new ones after this.
    this.#spares.discardSync();
    while (this.#writesInFlight.size > 0) await Promise.allSettled([...this.#writesInFlight]);
    await this.#background.idle();
    this.#spares.discardSync();
    // The listings and heads kept for prunes are dropped: the next prune lists its location again.
    this.#lineagePrune.forgetListings();
  }

  /** Keeps `writing` among the writes {@link close} waits for until it settles. */
  #tracked<T>(writing: Promise<T>): Promise<T> {
    this.#writesInFlight.add(writing);
    const forget = () => this.#writesInFlight.delete(writing);
    writing.then(forget, forget);
    return writing;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** What a prune removes, and how to find, right before it does, which of those a fork written since names. */
interface PrunePlan {
  removed: StoredCheckpoint[];
  /** Of `removing`, the ids some checkpoint file the plan did not know names as parent now. */
  forkedSince(removing: readonly string[]): Promise<Set<string>>;
}

/**
 * What a prune plan removes, without the unreadable files it was given as forks: each is alone in a
 * run of its own, so the plan never picks one; filtered all the same, as they are no stored checkpoint.
 */
function readableOnly(removed: StoredCheckpoint[]): StoredCheckpoint[] {
  return removed.some(isUnreadableFork) ? removed.filter((entry) => !isUnreadableFork(entry)) : removed;
}

/** A UUID of version 4 (random): `xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`. */
function isRandomUuid(id: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(id);
}
