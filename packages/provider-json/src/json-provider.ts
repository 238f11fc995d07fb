import { closeSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { CrewlineError, logger } from '@crewline/events';
import {
  type CheckpointMetadata,
  type CheckpointProvider,
  type CheckpointWrite,
  type ListQuery,
  PROVIDER_CONTRACT_VERSION,
  type ProviderCapabilities,
  type PruneOptions,
  type PruneResult,
  type RawCheckpoint,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { writeFileAtomic, writeFileAtomicSync } from './atomic-write.js';
import {
  assertMatchesName,
  metadataFromHead,
  metadataFromText,
  readFlags,
  readHead,
  readHeadSync,
} from './checkpoint-file.js';
import { type FoundCheckpoint, walkLocation } from './directory-walk.js';
import { component, describeError, errorCode, jsonError } from './errors.js';
import {
  assertCheckpointId,
  checkpointFileName,
  fileNameProblem,
  parseCheckpointFileName,
  tempFileName,
} from './file-names.js';
import { mapLimited } from './map-limited.js';
import {
  type JsonProviderOptions,
  parseJsonProviderOptions,
  type ResolvedJsonProviderOptions,
} from './options.js';
import {
  branchDirectory,
  ensureBranchDirectory,
  ensureBranchDirectorySync,
  existingBranchDirectory,
  locationExists,
  locationExistsSync,
  resolveRoot,
  rootFromBranchDirectory,
} from './paths.js';
import { assertPruneOptions, selectForPrune } from './prune-plan.js';
import { removeEmptyDirectories, removeFile } from './removal.js';
import { sweepTempFilesOnce, sweepTempFilesOnceSync } from './temp-sweep.js';

/** Files whose heads are read at once while listing (keeps file handles bounded for big locations). */
const listConcurrency = 16;

interface WritePlan {
  metadata: CheckpointMetadata;
  fileName: string;
  bytes: Buffer;
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
  readonly capabilities: ProviderCapabilities = { syncWrite: true, incremental: false, leases: false };
  /** The validated options with defaults applied. */
  readonly options: Readonly<ResolvedJsonProviderOptions>;
  /** Unreadable files already logged, so a listing repeated every second does not flood the log. */
  readonly #reported = new Set<string>();

  constructor(options?: JsonProviderOptions) {
    this.options = Object.freeze(parseJsonProviderOptions(options));
  }

  /** The absolute path of the location directory. */
  resolveLocation(location: string): string {
    return resolveRoot(location);
  }

  /**
   * Accepts a checkpoint file path, a location directory (its latest checkpoint), a branch
   * directory (that branch's latest) and `directory#id`. Undefined for anything else.
   */
  parseReference(reference: string): { location: string; id?: string } | undefined {
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
    const named = parseCheckpointFileName(basename(path));
    if (!named) return undefined;
    const metadata = this.#metadataSync(path);
    return { location: rootFromBranchDirectory(dirname(path), metadata.branch, path), id: metadata.id };
  }

  writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    const root = resolveRoot(location);
    const plan = this.#plan(root, checkpoint);
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
        return stored(plan.metadata, join(directory, plan.fileName), plan.bytes.length);
      } catch (error) {
        if (attempt === 0 && branchDirectoryVanished(error)) continue;
        throw asWriteError(error, root);
      }
    }
  }

  async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    const root = resolveRoot(location);
    const plan = this.#plan(root, checkpoint);
    await locationExists(root);
    await sweepTempFilesOnce(root);
    for (let attempt = 0; ; attempt += 1) {
      try {
        const { directory, created } = await ensureBranchDirectory(
          root,
          plan.metadata.branch,
          this.options.directoryMode,
        );
        await writeFileAtomic(directory, plan.fileName, tempFileName(plan.metadata.id), plan.bytes, {
          fsync: this.options.fsync,
          mode: this.options.fileMode,
          createdDirectories: created,
        });
        return stored(plan.metadata, join(directory, plan.fileName), plan.bytes.length);
      } catch (error) {
        // A concurrent prune may remove a branch directory it emptied between mkdir and open.
        if (attempt === 0 && branchDirectoryVanished(error)) continue;
        throw asWriteError(error, root);
      }
    }
  }

  async read(location: string, id: string): Promise<RawCheckpoint> {
    const root = resolveRoot(location);
    assertCheckpointId(id);
    const found = await this.#find(root, id);
    if (!found)
      throw jsonError(
        'not_found',
        `no checkpoint "${id}" in ${root}; run \`crewline checkpoint list\` to see ids`,
      );
    let handle: Awaited<ReturnType<typeof open>> | undefined;
    try {
      handle = await open(found.path, readFlags);
      const { size } = await handle.stat();
      if (size > this.options.maxCheckpointBytes) {
        throw jsonError(
          'too_large',
          `checkpoint "${found.path}" is ${size} bytes, over the ${this.options.maxCheckpointBytes}-byte limit; raise maxCheckpointBytes if you trust it`,
        );
      }
      return { text: await handle.readFile('utf8') };
    } catch (error) {
      if (CrewlineError.isInstance(error)) throw error;
      if (errorCode(error) === 'ENOENT')
        throw jsonError('not_found', `checkpoint "${id}" was removed while being read`);
      throw jsonError('read_failed', `cannot read checkpoint "${found.path}": ${describeError(error)}`, {
        cause: error,
      });
    } finally {
      await handle?.close();
    }
  }

  async list(location: string, query: ListQuery = {}): Promise<StoredCheckpoint[]> {
    const root = resolveRoot(location);
    const found = await this.#walk(root, query.branch);
    const described = await mapLimited(found, listConcurrency, (entry) => this.#describe(entry));
    return described.filter(
      (entry): entry is StoredCheckpoint =>
        entry !== undefined && (query.lineageId === undefined || entry.lineageId === query.lineageId),
    );
  }

  async latest(location: string, query: ListQuery = {}): Promise<StoredCheckpoint | undefined> {
    const root = resolveRoot(location);
    const found = await this.#walk(root, query.branch);
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
    const all = await this.list(root, options.branch === undefined ? {} : { branch: options.branch });
    const removed = selectForPrune(all, options);
    // A prune always leaves each branch its newest checkpoint, so it never empties a directory.
    if (!options.dryRun) for (const entry of removed) await removeFile(entry.reference);
    return { removed, dryRun: options.dryRun ?? false };
  }

  async delete(location: string, id: string): Promise<boolean> {
    const root = resolveRoot(location);
    assertCheckpointId(id);
    const found = await this.#find(root, id);
    if (!found) return false;
    const removed = await removeFile(found.path);
    await removeEmptyDirectories(root, found.branch);
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
    const bytes = Buffer.from(checkpoint.text(), 'utf8');
    if (bytes.length > this.options.maxCheckpointBytes) {
      throw jsonError(
        'too_large',
        `checkpoint "${metadata.id}" is ${bytes.length} bytes, over maxCheckpointBytes (${this.options.maxCheckpointBytes}); raise maxCheckpointBytes to store it`,
      );
    }
    return { metadata, fileName: checkpointFileName(metadata.id, metadata.parentId), bytes };
  }

  /** Checkpoint files of the location (or of one branch), oldest first. Missing location: none. */
  async #walk(root: string, branch: string | undefined): Promise<FoundCheckpoint[]> {
    if (branch !== undefined) branchDirectory(root, branch);
    if (!(await locationExists(root))) return [];
    await sweepTempFilesOnce(root);
    if (branch === undefined) return (await walkLocation(root)).checkpoints;
    const directory = await existingBranchDirectory(root, branch);
    return directory === undefined ? [] : (await walkLocation(root, { directory, branch })).checkpoints;
  }

  async #find(root: string, id: string): Promise<FoundCheckpoint | undefined> {
    return (await this.#walk(root, undefined)).find((entry) => entry.id === id);
  }

  /** Metadata of one file from its head (full parse only as a fallback); undefined and logged once when unreadable. */
  async #describe(found: FoundCheckpoint): Promise<StoredCheckpoint | undefined> {
    try {
      const head = await readHead(found.path);
      let metadata = head.text === undefined ? undefined : metadataFromHead(head.text, found.path);
      if (metadata === undefined) {
        if (head.size > this.options.maxCheckpointBytes) {
          throw jsonError(
            'too_large',
            `its metadata is not on its first lines and it is too large to parse whole`,
          );
        }
        const handle = await open(found.path, readFlags);
        try {
          metadata = metadataFromText(
            await handle.readFile('utf8'),
            found.path,
            this.options.maxCheckpointBytes,
          );
        } finally {
          await handle.close();
        }
      }
      assertMatchesName(metadata, found);
      return stored(metadata, found.path, head.size);
    } catch (error) {
      if (errorCode(error) === 'ENOENT' || CrewlineError.hasCode(error, 'not_found')) return undefined;
      this.#reportUnreadable(found.path, error);
      return undefined;
    }
  }

  #metadataSync(path: string): CheckpointMetadata {
    const head = readHeadSync(path);
    const fromHead = head.text === undefined ? undefined : metadataFromHead(head.text, path);
    if (fromHead) return fromHead;
    if (head.size > this.options.maxCheckpointBytes) {
      throw jsonError('too_large', `checkpoint "${path}" is ${head.size} bytes, over maxCheckpointBytes`);
    }
    let text: string;
    try {
      const descriptor = openSync(path, readFlags);
      try {
        text = readFileSync(descriptor, 'utf8');
      } finally {
        closeSync(descriptor);
      }
    } catch (error) {
      throw jsonError('read_failed', `cannot read checkpoint file "${path}": ${describeError(error)}`, {
        cause: error,
      });
    }
    return metadataFromText(text, path, this.options.maxCheckpointBytes);
  }

  /**
   * When `directory` holds checkpoint files directly it is a branch directory: the location is found
   * by stripping the branch (read from its newest file) and the reference means that branch's latest.
   */
  #rootOfDirectory(directory: string): { location: string; id: string } | undefined {
    let names: string[];
    try {
      names = readdirSync(directory);
    } catch {
      return undefined;
    }
    const newest = names
      .map((name) => ({ name, parsed: parseCheckpointFileName(name) }))
      .filter((entry) => entry.parsed !== undefined)
      .sort((a, b) => (a.parsed!.id < b.parsed!.id ? 1 : a.parsed!.id > b.parsed!.id ? -1 : 0));
    for (const entry of newest) {
      try {
        const path = join(directory, entry.name);
        const metadata = this.#metadataSync(path);
        return { location: rootFromBranchDirectory(directory, metadata.branch, path), id: metadata.id };
      } catch (error) {
        this.#reportUnreadable(join(directory, entry.name), error);
      }
    }
    return undefined;
  }

  #reportUnreadable(path: string, error: unknown): void {
    if (this.#reported.has(path)) return;
    this.#reported.add(path);
    logger.warn(component, `skipping unreadable checkpoint file ${path}`, error);
  }
}

function stored(metadata: CheckpointMetadata, path: string, sizeBytes: number): StoredCheckpoint {
  return { ...structuredClone(metadata), reference: path, sizeBytes };
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
