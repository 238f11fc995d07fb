import { existsSync } from 'node:fs';
import { logger } from '@crewline/events';
import { component, describeError, errorCode } from '../errors.js';
import type { SerialLane } from '../serial-lane.js';
import {
  type IdIndexEntry,
  type IdIndexModes,
  writeIdIndexEntries,
  writeIdIndexEntriesSync,
} from './id-index.js';
import { IdIndexView } from './id-index-view.js';

/**
 * Keeps a provider's id index up to date (see id-index.ts): writes entries after writes and reads,
 * never failing the operation (reads work without the index: they scan), tracks the entries still
 * queued after async writes, and logs an index that cannot be written once per location.
 */
export class IdIndexKeeper {
  readonly #modes: IdIndexModes;
  readonly #lane: SerialLane;
  /** Locations whose id index could not be written, already logged (one warning, not one per write). */
  readonly #failures = new Set<string>();
  /**
   * Per location, the last entry queued on the lane after an async write: the lane runs them in
   * order, so once it has settled every earlier entry of the location has too.
   */
  readonly #lastQueued = new Map<string, Promise<void>>();
  /** Per location, the entries queued after async writes and not written yet, by id. */
  readonly #queued = new Map<string, Map<string, IdIndexEntry>>();
  /** The buckets as last read, for {@link entryOf}. */
  readonly #view = new IdIndexView();

  /** `lane`: where entries written after async writes go, one at a time (see serial-lane.ts). */
  constructor(options: { modes: IdIndexModes; lane: SerialLane }) {
    this.#modes = options.modes;
    this.#lane = options.lane;
  }

  /**
   * Writes entries. After a write, a failure is logged once per location; a read that repairs an
   * entry stays quiet, since the location may be read-only on purpose (a backup).
   */
  async record(root: string, entries: readonly IdIndexEntry[], afterWrite: boolean): Promise<void> {
    try {
      await writeIdIndexEntries(root, entries, this.#modes);
    } catch (error) {
      // The location was removed after the write resolved (its checkpoint with it): nothing to index.
      if (errorCode(error) === 'ENOENT' && !existsSync(root)) return;
      if (afterWrite) this.#reportFailure(root, error);
    }
  }

  /** Sync {@link record}. */
  recordSync(root: string, entry: IdIndexEntry, afterWrite: boolean): void {
    try {
      writeIdIndexEntriesSync(root, [entry], this.#modes);
    } catch (error) {
      if (afterWrite) this.#reportFailure(root, error);
    }
  }

  /**
   * Writes the entries of checkpoints an async write just put in place, without the write waiting
   * for them: the bucket they go to may have to be created, and creating a file waits for the file
   * system's journal (up to a millisecond when other processes sync), which a run at its next model
   * call would pay. The index is a hint written after the rename either way: a reader that comes
   * first, or a process that dies before they are written, scans the location as for any missing
   * entry. A write's entries are one task on the lane (one append per bucket), behind the spare
   * files of the same write, so they never fill the thread pool the next write needs. The provider's close() waits for them, and its delete and prune wait
   * for those of their location ({@link written}). Written with the write instead (created while
   * its temp files are flushed), they made a group of three crew-50 files take a median 2 to 3 ms
   * longer on this machine (interleaved, 100 groups each, under load).
   */
  recordAfterWrite(root: string, entries: readonly IdIndexEntry[]): void {
    if (entries.length === 0) return;
    let queued = this.#queued.get(root);
    if (queued === undefined) {
      queued = new Map();
      this.#queued.set(root, queued);
    }
    for (const entry of entries) queued.set(entry.id, entry);
    const written = this.#lane.run(() => {
      // Those written at once meanwhile (writeQueuedSync) are not written again.
      const still = entries.filter((entry) => queued.get(entry.id) === entry);
      return still.length === 0 ? Promise.resolve() : this.record(root, still, true);
    });
    this.#lastQueued.set(root, written);
    void written.then(() => {
      // Written (or not writable): from now on the bucket says what there is to say.
      for (const entry of entries) if (queued.get(entry.id) === entry) queued.delete(entry.id);
      if (queued.size === 0 && this.#queued.get(root) === queued) this.#queued.delete(root);
      if (this.#lastQueued.get(root) === written) this.#lastQueued.delete(root);
    });
  }

  /**
   * Writes now, synchronously, the entries of `root` still queued after async writes: a lineage
   * lock is released after its holder's entries are in the index, so that the next holder, which
   * asks the index whether an id is stored, sees them. Synchronous, so that a release made while a
   * signal ends the process (its promise never awaited) is complete once it is called.
   */
  writeQueuedSync(root: string): void {
    const queued = this.#queued.get(root);
    if (queued === undefined || queued.size === 0) return;
    const entries = [...queued.values()];
    queued.clear();
    try {
      writeIdIndexEntriesSync(root, entries, this.#modes);
    } catch (error) {
      if (!(errorCode(error) === 'ENOENT' && !existsSync(root))) this.#reportFailure(root, error);
    }
  }

  /**
   * The entry of checkpoint `id` in `root` as this provider knows it: one of its own still queued,
   * else the line the index holds (see id-index-view.ts). Costs no directory scan, so every write
   * can ask it; undefined says the index knows of no such checkpoint, which an entry lost in a
   * crash, or written by another process a moment from now, can make wrong.
   */
  entryOf(root: string, id: string): IdIndexEntry | undefined {
    return this.#queued.get(root)?.get(id) ?? this.#view.entryOf(root, id);
  }

  /** {@link entryOf} for several ids at one moment (a group): each bucket is asked once. */
  entriesOf(root: string, ids: readonly string[]): (IdIndexEntry | undefined)[] {
    const queued = this.#queued.get(root);
    const indexed = this.#view.entriesOf(root, ids);
    return ids.map((id, index) => queued?.get(id) ?? indexed[index]);
  }

  /**
   * Waits for the entries of `root` still queued after async writes: a delete or prune that removed
   * a file and its entry while the entry was still queued would otherwise see it written again
   * afterwards, naming a file that is gone.
   */
  async written(root: string): Promise<void> {
    await this.#lastQueued.get(root);
  }

  #reportFailure(root: string, error: unknown): void {
    if (this.#failures.has(root)) return;
    this.#failures.add(root);
    logger.warn(
      component,
      `could not write the id index of ${root} (${describeError(error)}); checkpoints are stored, but reading one by id scans the location until the index can be written`,
      error,
    );
  }
}
