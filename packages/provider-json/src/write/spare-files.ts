import { closeSync, constants, open, unlinkSync } from 'node:fs';
import { join, sep } from 'node:path';
import { spareFileName } from '../file-names.js';
import type { SerialLane } from '../serial-lane.js';

// Creating a file is the slowest step of a checkpoint write apart from its fsync: the directory is
// locked for each new entry and the journal must take the inode, so the files of one group are
// created one after another, each a thread-pool round trip (in crew-50 on '*' the opens of a group
// took a median 1.3 ms, up to 4.5 ms for six files, of a barrier of about 6 ms). A run writes a
// group and then waits for a model call, so the files of the next group can be created while it
// waits: spare temp files, created and opened ahead, that a write fills and renames into place.
// A spare is a temp file like any other (`.spare.<pid>.<hex>.tmp`): hidden from readers, swept when
// its writer died, removed by close() and when the process exits.

/** An empty temp file created ahead and kept open for writing. */
export interface SpareFile {
  path: string;
  descriptor: number;
  /** Opened with O_SYNC: each write returns once its bytes and the file's size are durable. */
  synced: boolean;
}

/**
 * Open flags of a new temp file: exclusive creation and, when the write is to be fsync'd and the
 * platform has O_SYNC, synchronous writes — the write then returns once its bytes are durable, the
 * same guarantee as an fsync after it, in one thread-pool round trip instead of two. Windows has no
 * O_SYNC (libuv maps it to write-through, which does not flush the disk's cache): an fsync follows.
 */
export function tempFileFlags(fsync: boolean): { flags: number; synced: boolean } {
  const exclusive = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
  if (!fsync || process.platform === 'win32' || constants.O_SYNC === undefined)
    return { flags: exclusive, synced: false };
  return { flags: exclusive | constants.O_SYNC, synced: true };
}

/**
 * Most spare files kept ready, in all. Each is an open descriptor and an empty file: a process that
 * writes to many locations (a worker, the CLI) would otherwise keep a pile in every directory it
 * ever wrote to, and run out of descriptors.
 */
const spareLimit = 8;

/** Pools whose spares the process removes when it exits (an `exit` listener, added once). */
const livePools = new Set<SpareFiles>();
let exitListenerAdded = false;

function removeSparesAtExit(): void {
  for (const pool of livePools) pool.discardSync();
}

/**
 * Spare temp files of one provider (see the comment at the top of this file), kept for one
 * directory only: the one a group was last written to. A run writes its groups into one branch
 * directory; when a group goes to another directory, the spares of the previous one are closed and
 * removed, so a process never holds more than {@link spareLimit} of them.
 */
export class SpareFiles {
  /** The directory spares are kept for (the last one a group was written to). */
  #directory: string | undefined;
  readonly #ready: SpareFile[] = [];
  /** Spares of {@link #directory} whose creation is under way. */
  #creating = 0;
  /**
   * Changes whenever the spares being created are no longer wanted (another directory, forget,
   * discard): a spare whose open lands under another generation is closed and removed at once.
   */
  #generation = 0;
  /** After close() (discardSync): no spare is created any more, and one whose open lands is removed. */
  #closed = false;
  /** Creations queued or under way, each settled once its spare is ready or removed (see {@link forgetUnder}). */
  readonly #creations = new Set<Promise<void>>();
  /** Spares whose creation is in the thread pool: the process may exit before it reports back. */
  readonly #inFlight = new Set<string>();
  readonly #mode: number;
  readonly #fsync: boolean;
  readonly #lane: SerialLane;
  /** Spares kept: twice the largest group written so far, so two groups in a row find them. */
  #target = 0;

  /** `lane`: where the files are created, one at a time (see serial-lane.ts). */
  constructor(options: { mode: number; fsync: boolean; lane: SerialLane }) {
    this.#mode = options.mode;
    this.#fsync = options.fsync;
    this.#lane = options.lane;
  }

  /**
   * Makes spares again after {@link discardSync} (close()): called as a group starts, so a provider
   * used after close() keeps its spares, while a group that was in flight when close() ran, and
   * resolves after it, creates none.
   */
  reopen(): void {
    this.#closed = false;
  }

  /** A spare of `directory` to write a file into, if one is ready. */
  take(directory: string): SpareFile | undefined {
    return directory === this.#directory ? this.#ready.shift() : undefined;
  }

  /**
   * After a group of `groupSize` files was written into `directory`: creates, in the background,
   * the spares it lacks — after closing and removing those of another directory. Best-effort — a
   * spare that cannot be created is simply not there, and the next write creates its file itself.
   */
  replenish(directory: string, groupSize: number): void {
    if (this.#closed) return;
    if (directory !== this.#directory) {
      this.#release();
      this.#directory = directory;
    }
    this.#target = Math.min(spareLimit, Math.max(this.#target, 2 * groupSize));
    for (let count = this.#ready.length + this.#creating; count < this.#target; count += 1)
      this.#create(directory);
  }

  #create(directory: string): void {
    const path = join(directory, spareFileName());
    const { flags, synced } = tempFileFlags(this.#fsync);
    const generation = this.#generation;
    this.#creating += 1;
    const creation = this.#lane.run(
      () =>
        new Promise<void>((resolve) => {
          if (this.#closed || generation !== this.#generation) {
            // Released before its turn came: not created at all.
            resolve();
            return;
          }
          this.#inFlight.add(path);
          livePools.add(this);
          if (!exitListenerAdded) {
            exitListenerAdded = true;
            process.once('exit', removeSparesAtExit);
          }
          open(path, flags, this.#mode, (error, descriptor) => {
            this.#inFlight.delete(path);
            if (error) {
              if (generation === this.#generation) this.#creating -= 1;
            } else if (this.#closed || generation !== this.#generation) {
              // Released (another directory, forget, close) while it was being created.
              removeSpare({ path, descriptor, synced });
            } else {
              this.#creating -= 1;
              this.#ready.push({ path, descriptor, synced });
            }
            if (this.#closed && this.#inFlight.size === 0) livePools.delete(this);
            resolve();
          });
        }),
      { urgent: true },
    );
    this.#creations.add(creation);
    void creation.then(() => this.#creations.delete(creation));
  }

  /** Closes and removes the ready spares and drops those being created (removed when their open lands). */
  #release(): void {
    this.#generation += 1;
    this.#creating = 0;
    this.#directory = undefined;
    for (const spare of this.#ready.splice(0)) removeSpare(spare);
  }

  /**
   * Closes and removes the spares of `directory` (after a failed write there: it may be gone; after
   * a delete: they would keep an emptied directory), including those still being created.
   */
  forget(directory: string): void {
    if (directory === this.#directory) this.#release();
  }

  /**
   * Closes and removes the spares kept for a directory inside `root` (a run that wrote there ended:
   * its next write, if any, may be a while away, and its location may be removed right after);
   * resolves once those still being created are removed too. A later group creates spares again.
   * Spares of another location (another run of this provider still writing) are kept.
   */
  async forgetUnder(root: string): Promise<void> {
    const directory = this.#directory;
    if (directory === undefined || (directory !== root && !directory.startsWith(root + sep))) return;
    this.#release();
    await Promise.all(this.#creations);
  }

  /**
   * Closes and removes every spare, and creates none any more (close(); the process's exit). A
   * spare still being created is removed when its open lands.
   */
  discardSync(): void {
    this.#closed = true;
    this.#release();
    // At exit, a spare still being created may already exist: removed too (its open may yet land
    // after this, leaving an empty temp file for the next writer's sweep).
    for (const path of this.#inFlight) removeQuietly(path);
    if (this.#inFlight.size === 0) livePools.delete(this);
  }
}

function removeSpare(spare: SpareFile): void {
  try {
    closeSync(spare.descriptor);
  } catch {
    // Already closed: only the file is left to remove.
  }
  removeQuietly(spare.path);
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Removed with its directory, or never there: a left-over spare is swept like any temp file.
  }
}
