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
  type RawCheckpoint,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { IdIndexKeeper } from './id-index/id-index-keeper.js';
import {
  claimLineageLease,
  type LeaseContext,
  releaseLineageLease,
  renewLineageLease,
} from './leases/lineage-leases.js';
import {
  type JsonProviderOptions,
  parseJsonProviderOptions,
  type ResolvedJsonProviderOptions,
} from './options.js';
import { resolveRoot } from './paths.js';
import { LineagePruneView } from './prune/lineage-prune.js';
import { type PruneContext, pruneLocation } from './prune/location-prune.js';
import { type DeleteContext, deleteCheckpoint } from './prune/removal.js';
import { LocationReader } from './read/location-reader.js';
import { parseLocationReference, type ReferenceContext } from './read/location-reference.js';
import { latestCheckpoint, listLocation, type ReadContext, readCheckpoint } from './read/read-and-list.js';
import { SerialLane } from './serial-lane.js';
import {
  storeCheckpointFile,
  storeCheckpointFileSync,
  storeCheckpointFiles,
  type WriteContext,
} from './write/checkpoint-writes.js';
import { IdReservations } from './write/id-reservations.js';
import { SpareFiles } from './write/spare-files.js';

/** What the provider's writes, reads, removals and leases are given: each module asks for its part. */
type ProviderParts = WriteContext &
  ReadContext &
  ReferenceContext &
  PruneContext &
  DeleteContext &
  LeaseContext;

/**
 * Stores each checkpoint as one self-contained, human-readable JSON file:
 * `<location>/<branch>/<id>_p-<parentId|none>.json` (a branch `fork/x` is a nested directory).
 * Writes are atomic and durable (temp file, fsync, rename, fsync the directory); names never escape
 * the location; listing reads only the first lines of each file.
 *
 * The work is done by one module per concern, each given the parts it needs: writes
 * (write/checkpoint-writes.ts), reads and listing (read/read-and-list.ts), references
 * (read/location-reference.ts), prune (prune/location-prune.ts), delete (prune/removal.ts), leases
 * (leases/lineage-leases.ts).
 * A method that only hands on its module's promise is not `async`: the wrapper would settle it two
 * microtask turns later (the modules' functions are async, so a bad argument still rejects).
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
  /** The options, the id index, the location reader and the rest the modules named above are given. */
  readonly #parts: ProviderParts;

  constructor(options?: JsonProviderOptions) {
    this.options = Object.freeze(parseJsonProviderOptions(options));
    this.#spares = new SpareFiles({
      mode: this.options.fileMode,
      fsync: this.options.fsync,
      lane: this.#background,
    });
    // The id index, kept up to date after writes and reads (see id-index-keeper.ts).
    const index = new IdIndexKeeper({ modes: this.options, lane: this.#background });
    // Finds and describes the checkpoint files of a location (see location-reader.ts).
    const reader = new LocationReader({ maxCheckpointBytes: this.options.maxCheckpointBytes, index });
    this.#parts = {
      options: this.options,
      spares: this.#spares,
      index,
      reader,
      // What the prune of one run reads, and remembers between its prunes (see lineage-prune.ts).
      lineagePrune: new LineagePruneView(reader),
      reservations: new IdReservations(),
      // Through the method, looked up at each call: the prune of a whole location lists it as a
      // subclass or a caller that replaced listWithUnreadable says.
      listWithUnreadable: (location) => this.listWithUnreadable(location),
    };
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
    return parseLocationReference(this.#parts, reference);
  }

  writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    return storeCheckpointFileSync(this.#parts, location, checkpoint);
  }

  /**
   * Async {@link writeSync}. It resolves once the file is in place and synced; its id index entry is
   * written after that, without the write waiting for it. It uses a spare temp file when a
   * {@link writeBatch} left one ready, and leaves none of its own.
   */
  write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    return this.#tracked(storeCheckpointFile(this.#parts, location, checkpoint));
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
    return this.#tracked(storeCheckpointFiles(this.#parts, location, checkpoints));
  }

  read(location: string, id: string): Promise<RawCheckpoint> {
    return readCheckpoint(this.#parts, location, id);
  }

  async list(location: string, query: ListQuery = {}): Promise<StoredCheckpoint[]> {
    const listing = await this.listWithUnreadable(location, query);
    // What this listing leaves out is said once; listWithUnreadable returns it instead.
    for (const file of listing.unreadable) this.#parts.reader.reportUnreadable(file.reference, file.reason);
    return listing.checkpoints;
  }

  listWithUnreadable(location: string, query: ListQuery = {}): Promise<ListingWithUnreadable> {
    return listLocation(this.#parts, location, query);
  }

  latest(location: string, query: ListQuery = {}): Promise<StoredCheckpoint | undefined> {
    return latestCheckpoint(this.#parts, location, query);
  }

  prune(location: string, options: PruneOptions): Promise<PruneResult> {
    return pruneLocation(this.#parts, location, options);
  }

  /**
   * Locks a lineage for one continuation on this machine (a lock file; see lineage-lock.ts). Files
   * cannot fence across machines, so `capabilities.leases` stays false.
   */
  claimLease(location: string, request: LeaseRequest): Promise<Lease> {
    return claimLineageLease(this.#parts, location, request);
  }

  renewLease(location: string, token: LeaseToken, ttlMs: number): Promise<Lease> {
    return renewLineageLease(location, token, ttlMs);
  }

  async releaseLease(location: string, token: LeaseToken): Promise<void> {
    releaseLineageLease(this.#parts, location, token);
  }

  /**
   * A run that wrote here ended: removes the spare temp files made ahead for its next writes, those
   * still being created included (as they land), so that its user may remove the location at once
   * and a long-lived process keeps no empty files where runs ended. The next group makes new ones.
   */
  async runEnded(location: string): Promise<void> {
    await this.#spares.forgetUnder(resolveRoot(location));
  }

  delete(location: string, id: string): Promise<boolean> {
    return deleteCheckpoint(this.#parts, location, id);
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
    this.#parts.lineagePrune.forgetListings();
  }

  /** Keeps `writing` among the writes {@link close} waits for until it settles. */
  #tracked<T>(writing: Promise<T>): Promise<T> {
    this.#writesInFlight.add(writing);
    const forget = () => this.#writesInFlight.delete(writing);
    writing.then(forget, forget);
    return writing;
  }
}
