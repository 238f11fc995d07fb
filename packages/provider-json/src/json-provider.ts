import { existsSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { CrewlineError, logger } from '@crewline/events';
import {
  type CheckpointMetadata,
  type CheckpointProvider,
  type CheckpointWrite,
  type Lease,
  type LeaseRequest,
  type LeaseToken,
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
  type AtomicFile,
  type FileContent,
  writeFileAtomic,
  writeFileAtomicSync,
  writeFilesAtomic,
} from './atomic-write.js';
import { assertMatchesName, idInText, readFlags, readMetadata, tooLargeFile } from './checkpoint-file.js';
import { type FoundCheckpoint, refuseLinks, type WalkResult, walkLocation } from './directory-walk.js';
import { component, describeError, errorCode, jsonError } from './errors.js';
import { assertCheckpointId, checkpointFileName, fileNameProblem, tempFileName } from './file-names.js';
import {
  branchDirectoryReference,
  nameMismatch,
  parseFileReference,
  standaloneCheckpoint,
  storedFile,
} from './file-reference.js';
import {
  findInIdIndex,
  type IdIndexEntry,
  removeIdIndexEntry,
  writeIdIndexEntry,
  writeIdIndexEntrySync,
} from './id-index.js';
import {
  assertHoldsLineageLock,
  claimLineageLock,
  releaseLineageLock,
  renewLineageLock,
} from './lineage-lock.js';
import { mapLimited } from './map-limited.js';
import {
  type JsonProviderOptions,
  parseJsonProviderOptions,
  type ResolvedJsonProviderOptions,
} from './options.js';
import {
  branchDirectory,
  ensureBranchDirectorySync,
  existingBranchDirectory,
  locationExists,
  locationExistsSync,
  resolveRoot,
} from './paths.js';
import { assertPruneOptions } from './prune-plan.js';
import { removeEmptyDirectories, removeFile, removeFiles } from './removal.js';
import { SerialLane } from './serial-lane.js';
import { SpareFiles } from './spare-files.js';
import { sweepTempFilesOnce, sweepTempFilesOnceSync } from './temp-sweep.js';

/** Files whose heads are read at once while listing (keeps file handles bounded for big locations). */
const listConcurrency = 16;

interface WritePlan {
  metadata: CheckpointMetadata;
  fileName: string;
  /** The file's bytes, as pieces when the write has them (see `CheckpointWrite.byteChunks`). */
  bytes: FileContent;
  size: number;
}

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
  /** Unreadable files already logged, so a listing repeated every second does not flood the log. */
  readonly #reported = new Set<string>();
  /** Locations whose id index could not be written, already logged (one warning, not one per write). */
  readonly #indexFailures = new Set<string>();
  /** What async writes leave to do after they resolve, one task at a time (see serial-lane.ts). */
  readonly #background = new SerialLane();
  /**
   * Per location, the last id index entry queued on {@link #background} after an async write: the
   * lane runs them in order, so once it has settled every earlier entry of the location has too.
   */
  readonly #lastIndexEntry = new Map<string, Promise<void>>();
  /** Async writes not settled yet: {@link close} waits for them before what they leave behind. */
  readonly #writesInFlight = new Set<Promise<unknown>>();
  /** Temp files created ahead for the next async writes (see spare-files.ts); close() removes them. */
  readonly #spares: SpareFiles;

  constructor(options?: JsonProviderOptions) {
    this.options = Object.freeze(parseJsonProviderOptions(options));
    this.#spares = new SpareFiles({
      mode: this.options.fileMode,
      fsync: this.options.fsync,
      lane: this.#background,
    });
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
      const location = this.#rootOfDirectory(resolve(directory))?.location ?? resolve(directory);
      return id === '' ? { location } : { location, id };
    }
    const path = resolve(reference);
    let isFile: boolean;
    try {
      isFile = statSync(path).isFile();
    } catch {
      return undefined;
    }
    if (!isFile) return this.#rootOfDirectory(path) ?? { location: path };
    const file = parseFileReference(path, this.options.maxCheckpointBytes);
    if (!file) return undefined;
    const { id } = file.checkpoint;
    if (file.home === undefined) return { location: path, id, checkpoint: file.checkpoint };
    this.#recordSync(file.home, { id, branch: file.checkpoint.branch, fileName: basename(path) }, false);
    return { location: file.home, id, checkpoint: file.checkpoint };
  }

  writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    const root = resolveRoot(location);
    const plan = this.#plan(root, checkpoint);
    if (checkpoint.lease !== undefined) assertHoldsLineageLock(root, checkpoint.lease);
    locationExistsSync(root);
    sweepTempFilesOnceSync(root);
    for (let attempt = 0; ; attempt += 1) {
      try {
        const { directory, created } = ensureBranchDirectorySync(
          root,
          plan.metadata.branch,
          this.options.directoryMode,
        );
        writeFileAtomicSync(directory, plan.fileName, tempFileName(plan.metadata.id), plan.bytes, {
          fsync: this.options.fsync,
          mode: this.options.fileMode,
          createdDirectories: created,
        });
        this.#recordSync(root, indexEntryOf(plan), true);
        return storedFile(plan.metadata, join(directory, plan.fileName), plan.size);
      } catch (error) {
        if (attempt === 0 && branchDirectoryVanished(error)) continue;
        throw asWriteError(error, root);
      }
    }
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
    const plan = this.#plan(root, checkpoint);
    if (checkpoint.lease !== undefined) assertHoldsLineageLock(root, checkpoint.lease);
    locationExistsSync(root);
    await sweepTempFilesOnce(root);
    for (let attempt = 0; ; attempt += 1) {
      try {
        const { directory, created } = ensureBranchDirectorySync(
          root,
          plan.metadata.branch,
          this.options.directoryMode,
        );
        try {
          await writeFileAtomic(directory, plan.fileName, tempFileName(plan.metadata.id), plan.bytes, {
            fsync: this.options.fsync,
            mode: this.options.fileMode,
            createdDirectories: created,
            spares: this.#spares,
          });
        } catch (error) {
          this.#spares.forget(directory);
          throw error;
        }
        this.#recordAfterWrite(root, [indexEntryOf(plan)]);
        return storedFile(plan.metadata, join(directory, plan.fileName), plan.size);
      } catch (error) {
        // A concurrent prune may remove a branch directory it emptied between mkdir and open.
        if (attempt === 0 && branchDirectoryVanished(error)) continue;
        throw asWriteError(error, root);
      }
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
    const plans = checkpoints.map((checkpoint) => this.#plan(root, checkpoint));
    for (const checkpoint of checkpoints)
      if (checkpoint.lease !== undefined) assertHoldsLineageLock(root, checkpoint.lease);
    locationExistsSync(root);
    await sweepTempFilesOnce(root);
    for (let attempt = 0; ; attempt += 1) {
      try {
        const files: AtomicFile[] = [];
        const directories = new Map<string, { directory: string; created: string[] }>();
        for (const plan of plans) {
          let branch = directories.get(plan.metadata.branch);
          if (branch === undefined) {
            branch = ensureBranchDirectorySync(root, plan.metadata.branch, this.options.directoryMode);
            directories.set(plan.metadata.branch, branch);
          }
          files.push({
            directory: branch.directory,
            finalName: plan.fileName,
            tempName: tempFileName(plan.metadata.id),
            bytes: plan.bytes,
            createdDirectories: branch.created,
          });
          branch = { directory: branch.directory, created: [] };
          directories.set(plan.metadata.branch, branch);
        }
        const used = new Map<string, number>();
        for (const file of files) used.set(file.directory, (used.get(file.directory) ?? 0) + 1);
        try {
          await writeFilesAtomic(files, {
            fsync: this.options.fsync,
            mode: this.options.fileMode,
            spares: this.#spares,
          });
        } catch (error) {
          for (const directory of used.keys()) this.#spares.forget(directory);
          throw error;
        }
        for (const [directory, count] of used) this.#spares.replenish(directory, count);
        this.#recordAfterWrite(root, plans.map(indexEntryOf));
        return plans.map((plan, index) =>
          storedFile(plan.metadata, join(files[index]!.directory, plan.fileName), plan.size),
        );
      } catch (error) {
        // As in write(): a concurrent prune may remove a branch directory it emptied between mkdir
        // and open. Nothing was placed in that directory; files placed before it (other branches)
        // are written again with the same bytes, which a reader cannot tell apart.
        if (attempt === 0 && branchDirectoryVanished(error)) continue;
        throw asWriteError(error, root);
      }
    }
  }

  async read(location: string, id: string): Promise<RawCheckpoint> {
    const root = resolveRoot(location);
    assertCheckpointId(id);
    const path = await this.#pathOf(root, id);
    if (path === undefined)
      throw jsonError(
        'not_found',
        `no checkpoint "${id}" in ${root}; run \`crewline checkpoint list\` to see ids`,
      );
    let handle: Awaited<ReturnType<typeof open>> | undefined;
    let text: string;
    try {
      handle = await open(path, readFlags);
      const { size } = await handle.stat();
      if (size > this.options.maxCheckpointBytes)
        throw tooLargeFile(path, size, this.options.maxCheckpointBytes);
      text = await handle.readFile('utf8');
    } catch (error) {
      if (CrewlineError.isInstance(error)) throw error;
      if (errorCode(error) === 'ENOENT')
        throw jsonError('not_found', `checkpoint "${id}" was removed while being read`);
      throw jsonError('read_failed', `cannot read checkpoint "${path}": ${describeError(error)}`, {
        cause: error,
      });
    } finally {
      await handle?.close();
    }
    // The file found for `id` must hold `id`: a file renamed over another is never read as it.
    const held = idInText(text, path, this.options.maxCheckpointBytes);
    if (held !== id) {
      if (path === root)
        throw jsonError('not_found', `checkpoint file "${root}" holds checkpoint "${held}", not "${id}"`);
      throw nameMismatch(path, id, held);
    }
    return { text };
  }

  async list(location: string, query: ListQuery = {}): Promise<StoredCheckpoint[]> {
    const root = resolveRoot(location);
    const standalone = await this.#standalone(root, query);
    if (standalone !== undefined) return standalone;
    const found = refuseLinks(root, await this.#walk(root, query.branch));
    const described = await mapLimited(found, listConcurrency, (entry) => this.#describe(entry));
    return described.filter(
      (entry): entry is StoredCheckpoint =>
        entry !== undefined && (query.lineageId === undefined || entry.lineageId === query.lineageId),
    );
  }

  async latest(location: string, query: ListQuery = {}): Promise<StoredCheckpoint | undefined> {
    const root = resolveRoot(location);
    const standalone = await this.#standalone(root, query);
    if (standalone !== undefined) return standalone[0];
    const found = refuseLinks(root, await this.#walk(root, query.branch));
    // Newest first, reading heads only until one matches: the latest of 10,000 reads one file.
    for (let index = found.length - 1; index >= 0; index -= 1) {
      const entry = await this.#describe(found[index]!);
      if (entry && (query.lineageId === undefined || entry.lineageId === query.lineageId)) return entry;
    }
    return undefined;
  }

  async prune(location: string, options: PruneOptions): Promise<PruneResult> {
    const root = resolveRoot(location);
    assertPruneOptions(options);
    // A standalone checkpoint file is a location to read, never to remove from.
    await locationExists(root);
    await this.#indexEntriesWritten(root);
    // The whole location, not just the branch: fork points are found across runs and branches.
    const removed = planPrune(await this.list(root), options);
    // A prune always leaves each run its newest checkpoint, so it never empties a directory.
    if (!options.dryRun) {
      await removeFiles(
        removed.map((entry) => entry.reference),
        this.options.fsync,
      );
      for (const entry of removed) await removeIdIndexEntry(root, entry.id);
    }
    return { removed, dryRun: options.dryRun ?? false };
  }

  /**
   * Locks a lineage for one continuation on this machine (a lock file; see lineage-lock.ts). Files
   * cannot fence across machines, so `capabilities.leases` stays false.
   */
  async claimLease(location: string, request: LeaseRequest): Promise<Lease> {
    const root = resolveRoot(location);
    // The head is read after the lock is taken, and only for a continued checkpoint (it reads only
    // the newer files of its own branch); see claimLineageLock.
    return claimLineageLock(root, request, (checkpointId) =>
      this.#headOf(root, checkpointId, request.lineageId),
    );
  }

  async renewLease(location: string, token: LeaseToken, ttlMs: number): Promise<Lease> {
    return renewLineageLock(resolveRoot(location), token, ttlMs);
  }

  async releaseLease(location: string, token: LeaseToken): Promise<void> {
    releaseLineageLock(resolveRoot(location), token);
  }

  async delete(location: string, id: string): Promise<boolean> {
    const root = resolveRoot(location);
    assertCheckpointId(id);
    await this.#indexEntriesWritten(root);
    const found = await this.#locate(root, id);
    if (!found) return false;
    // The directory sync comes after the empty directories are gone, on the one that remains.
    const removed = await removeFile(found.path);
    await removeIdIndexEntry(root, id);
    // Spare temp files would keep an emptied branch directory; the next group creates new ones.
    this.#spares.forget(dirname(found.path));
    await removeEmptyDirectories(root, found.branch, this.options.fsync);
    return removed;
  }

  #plan(root: string, checkpoint: CheckpointWrite): WritePlan {
    const { metadata } = checkpoint;
    assertCheckpointId(metadata.id);
    if (metadata.parentId !== null) assertCheckpointId(metadata.parentId, 'parent checkpoint id');
    branchDirectory(root, metadata.branch);
    const problem = fileNameProblem(metadata.id, metadata.parentId);
    if (problem)
      throw jsonError('invalid_name', `${problem}; JsonProvider cannot store it, use SqliteProvider`);
    // Pieces when the write has them: the event lines the run encoded once go to the file as they
    // are, not copied into one buffer per checkpoint first.
    const bytes = checkpoint.byteChunks?.() ?? checkpoint.bytes();
    let size = 0;
    for (const piece of bytes instanceof Uint8Array ? [bytes] : bytes) size += piece.length;
    if (size > this.options.maxCheckpointBytes) {
      throw jsonError(
        'too_large',
        `checkpoint "${metadata.id}" is ${size} bytes, over maxCheckpointBytes (${this.options.maxCheckpointBytes}); raise maxCheckpointBytes to store it`,
      );
    }
    return { metadata, fileName: checkpointFileName(metadata.id, metadata.parentId), bytes, size };
  }

  /** Checkpoint files of the location (or of one branch), oldest first. Missing location: none. */
  async #walk(root: string, branch: string | undefined): Promise<WalkResult> {
    const nothing: WalkResult = { checkpoints: [], tempFiles: [], links: [] };
    if (branch !== undefined) branchDirectory(root, branch);
    if (!(await locationExists(root))) return nothing;
    await sweepTempFilesOnce(root);
    if (branch === undefined) return walkLocation(root);
    const directory = await existingBranchDirectory(root, branch);
    return directory === undefined ? nothing : walkLocation(root, { directory, branch });
  }

  /**
   * The file of checkpoint `id` in a location directory: where its id index entry says (a constant
   * number of file system calls, however many checkpoints the location holds), else found by walking
   * the location, after which the entry is written again. Throws `symlinkError` when the way to it
   * is a link, or when it is not found and the location holds links (it may be behind one).
   */
  async #locate(root: string, id: string): Promise<FoundCheckpoint | undefined> {
    const indexed = await findInIdIndex(root, id);
    if (indexed !== undefined) return indexed;
    const walked = await this.#walk(root, undefined);
    const found = walked.checkpoints.find((checkpoint) => checkpoint.id === id);
    if (found !== undefined) {
      await this.#record(root, { id, branch: found.branch, fileName: basename(found.path) }, false);
      return found;
    }
    await removeIdIndexEntry(root, id);
    refuseLinks(root, walked);
    return undefined;
  }

  /**
   * The newest checkpoint of `lineageId` at or after checkpoint `id` on its branch (a lineage never
   * leaves its branch): `id` itself when nothing continued it. `null` when `id` does not exist.
   */
  async #headOf(root: string, id: string, lineageId: string): Promise<string | null> {
    const found = await this.#locate(root, id);
    if (found === undefined) return null;
    const later = (await this.#walk(root, found.branch)).checkpoints.filter(
      (entry) => entry.branch === found.branch && entry.id > id,
    );
    for (let index = later.length - 1; index >= 0; index -= 1) {
      const entry = await this.#describe(later[index]!);
      if (entry?.lineageId === lineageId) return entry.id;
    }
    return id;
  }

  /** The file of checkpoint `id`: the location itself when it is a standalone checkpoint file. */
  async #pathOf(root: string, id: string): Promise<string | undefined> {
    if (await this.#standalone(root, {})) return root;
    return (await this.#locate(root, id))?.path;
  }

  /**
   * Writes an id index entry; never fails the operation, since reads work without it (they scan).
   * After a write, a failure is logged once per location; a read that repairs an entry stays quiet,
   * since the location may be read-only on purpose (a backup).
   */
  async #record(root: string, entry: IdIndexEntry, afterWrite: boolean): Promise<void> {
    try {
      await writeIdIndexEntry(root, entry, this.options);
    } catch (error) {
      // The location was removed after the write resolved (its checkpoint with it): nothing to index.
      if (errorCode(error) === 'ENOENT' && !existsSync(root)) return;
      if (afterWrite) this.#reportIndexFailure(root, error);
    }
  }

  /**
   * Writes the id index entries of checkpoints an async write just put in place, without the write
   * waiting for them: each is a new file, and creating one waits for the file system's journal (up
   * to a millisecond when other processes sync), which a run at its next model call would pay. The
   * index is a hint written after the rename either way: a reader that comes first, or a process
   * that dies before they are written, scans the location as for any missing entry. They are
   * written one at a time on the background lane, behind the spare files of the same write, so they
   * never fill the thread pool the next write needs. {@link close} waits for them, and so do
   * {@link delete} and {@link prune} for those of their location. Written with the write instead
   * (created while its temp files are flushed), they made a group of three crew-50 files take a
   * median 2 to 3 ms longer on this machine (interleaved, 100 groups each, under load).
   */
  #recordAfterWrite(root: string, entries: readonly IdIndexEntry[]): void {
    for (const entry of entries) {
      const written = this.#background.run(() => this.#record(root, entry, true));
      this.#lastIndexEntry.set(root, written);
      void written.then(() => {
        if (this.#lastIndexEntry.get(root) === written) this.#lastIndexEntry.delete(root);
      });
    }
  }

  /**
   * Waits for the id index entries of `root` still being written after async writes: a delete or
   * prune that removed a file and its entry while the entry was still queued would otherwise see it
   * written again afterwards, naming a file that is gone.
   */
  async #indexEntriesWritten(root: string): Promise<void> {
    await this.#lastIndexEntry.get(root);
  }

  /**
   * Waits for the async writes in flight, then for the id index entries still being written after
   * them, and removes the spare temp files created ahead for the next ones (the process removes
   * them at exit otherwise): nothing of a write started before it is written after it resolved. The
   * provider stays usable: a group written after it creates spares again. A caller that removes a
   * location once its writes resolved calls it first, or an entry may be written while it removes.
   */
  async close(): Promise<void> {
    while (this.#writesInFlight.size > 0) await Promise.allSettled([...this.#writesInFlight]);
    await this.#background.idle();
    this.#spares.discardSync();
  }

  /** Keeps `writing` among the writes {@link close} waits for until it settles. */
  #tracked<T>(writing: Promise<T>): Promise<T> {
    this.#writesInFlight.add(writing);
    const forget = () => this.#writesInFlight.delete(writing);
    writing.then(forget, forget);
    return writing;
  }

  /** Sync {@link #record}. */
  #recordSync(root: string, entry: IdIndexEntry, afterWrite: boolean): void {
    try {
      writeIdIndexEntrySync(root, entry, this.options);
    } catch (error) {
      if (afterWrite) this.#reportIndexFailure(root, error);
    }
  }

  #reportIndexFailure(root: string, error: unknown): void {
    if (this.#indexFailures.has(root)) return;
    this.#indexFailures.add(root);
    logger.warn(
      component,
      `could not write the id index of ${root} (${describeError(error)}); checkpoints are stored, but reading one by id scans the location until the index can be written`,
      error,
    );
  }

  /** The listing of a standalone checkpoint file location (filtered by `query`); undefined for a directory. */
  async #standalone(root: string, query: ListQuery): Promise<StoredCheckpoint[] | undefined> {
    if (query.branch !== undefined) branchDirectory(root, query.branch);
    const checkpoint = await standaloneCheckpoint(root, this.options.maxCheckpointBytes);
    if (checkpoint === undefined) return undefined;
    const matches =
      (query.branch === undefined || checkpoint.branch === query.branch) &&
      (query.lineageId === undefined || checkpoint.lineageId === query.lineageId);
    return matches ? [checkpoint] : [];
  }

  /** Metadata of one file from its head (full parse only as a fallback); undefined and logged once when unreadable. */
  async #describe(found: FoundCheckpoint): Promise<StoredCheckpoint | undefined> {
    try {
      const { metadata, size } = await readMetadata(found.path, this.options.maxCheckpointBytes);
      assertMatchesName(metadata, found);
      return storedFile(metadata, found.path, size);
    } catch (error) {
      if (errorCode(error) === 'ENOENT' || CrewlineError.hasCode(error, 'not_found')) return undefined;
      this.#reportUnreadable(found.path, error);
      return undefined;
    }
  }

  /** A branch directory as a reference: that branch's latest checkpoint (see file-reference.ts). */
  #rootOfDirectory(directory: string): { location: string; id: string } | undefined {
    return branchDirectoryReference(directory, this.options.maxCheckpointBytes, (path, error) =>
      this.#reportUnreadable(path, error),
    );
  }

  #reportUnreadable(path: string, error: unknown): void {
    if (this.#reported.has(path)) return;
    this.#reported.add(path);
    logger.warn(component, `skipping unreadable checkpoint file ${path}`, error);
  }
}

function indexEntryOf(plan: WritePlan): IdIndexEntry {
  return { id: plan.metadata.id, branch: plan.metadata.branch, fileName: plan.fileName };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function branchDirectoryVanished(error: unknown): boolean {
  const cause = CrewlineError.isInstance(error) ? error.cause : error;
  return errorCode(cause) === 'ENOENT';
}

function asWriteError(error: unknown, root: string): unknown {
  if (CrewlineError.isInstance(error)) return error;
  return jsonError('write_failed', `could not write a checkpoint in ${root}: ${describeError(error)}`, {
    cause: error,
  });
}
