import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { CrewlineError, logger } from '@crewline/events';
import type { ListQuery, StoredCheckpoint, UnreadableCheckpoint } from '@crewline/runtime-state';
import { component, describeError, errorCode } from '../errors.js';
import { findInIdIndex, removeIdIndexEntries } from '../id-index/id-index.js';
import type { IdIndexKeeper } from '../id-index/id-index-keeper.js';
import { branchDirectory, existingBranchDirectory, locationExists } from '../paths.js';
import { sweepTempFilesOnce } from '../write/temp-sweep.js';
import { assertMatchesName, readMetadata } from './checkpoint-file.js';
import { type FoundCheckpoint, refuseLinks, type WalkResult, walkLocation } from './directory-walk.js';
import { branchDirectoryReference, standaloneCheckpoint, storedFile } from './file-reference.js';

/** Files whose heads {@link LocationReader.newestOf} reads at once (a listing reads 16 at a time too). */
const newestOfBatch = 16;

/**
 * Finds checkpoint files in a location and reads what they say about themselves: the walk of a
 * location or branch, a checkpoint found by id (through the id index), a lineage's head, the
 * listing entry of one file, and a standalone checkpoint file as a location. A file that cannot be
 * read is skipped and logged once, so a listing repeated every second does not flood the log.
 */
export class LocationReader {
  readonly #maxCheckpointBytes: number;
  readonly #index: IdIndexKeeper;
  /** Unreadable files already logged. */
  readonly #reported = new Set<string>();

  /** `index`: repairs the entry of a checkpoint found by walking. */
  constructor(options: { maxCheckpointBytes: number; index: IdIndexKeeper }) {
    this.#maxCheckpointBytes = options.maxCheckpointBytes;
    this.#index = options.index;
  }

  /** Checkpoint files of the location (or of one branch), oldest first. Missing location: none. */
  async walk(root: string, branch: string | undefined): Promise<WalkResult> {
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
  async locate(root: string, id: string): Promise<FoundCheckpoint | undefined> {
    const indexed = await findInIdIndex(root, id);
    if (indexed !== undefined) return indexed;
    const walked = await this.walk(root, undefined);
    const found = walked.checkpoints.find((checkpoint) => checkpoint.id === id);
    if (found !== undefined) {
      await this.#index.record(root, [{ id, branch: found.branch, fileName: basename(found.path) }], false);
      return found;
    }
    await removeIdIndexEntries(root, [id]);
    refuseLinks(root, walked);
    return undefined;
  }

  /**
   * The newest checkpoint of `lineageId` at or after checkpoint `id` on its branch (a lineage never
   * leaves its branch): `id` itself when nothing continued it. `null` when `id` does not exist. When
   * `id` is not a checkpoint of `lineageId` (or cannot be read), the lineage's own newest checkpoint
   * anywhere ({@link newestOf}): a claim naming another run's checkpoint is refused with the head of
   * the run it claims, as the other providers refuse it.
   */
  async headOf(root: string, id: string, lineageId: string): Promise<string | null> {
    const found = await this.locate(root, id);
    if (found === undefined) return null;
    const later = (await this.walk(root, found.branch)).checkpoints.filter(
      (entry) => entry.branch === found.branch && entry.id > id,
    );
    for (let index = later.length - 1; index >= 0; index -= 1) {
      const entry = await this.describe(later[index]!);
      if (entry?.lineageId === lineageId) return entry.id;
    }
    if ((await this.describe(found))?.lineageId === lineageId) return id;
    return this.newestOf(root, lineageId);
  }

  /**
   * The newest checkpoint of `lineageId` anywhere in the location (a lineage not continued yet may
   * be on any branch: a fork starts on its own), `null` when it has none: what a claim of a new
   * lineage checks. Files are read newest first, {@link newestOfBatch} at a time, until one of the
   * lineage's is found; a lineage with none reads the head of every file (a run's first claim in a
   * location of 2,000 checkpoints: about 0.15 s). Unreadable files are skipped, as `latest`
   * skips them; a link where a branch or checkpoint could be throws `symlinkError`, as a listing does.
   * Only {@link headOf} asks here (a claimed checkpoint that is not the lineage's, rare); the claim
   * of a lineage as new asks `LineagePruneView.newestOf`, which gives the same answer from the runs
   * it keeps by file name: a change to one answer is a change to both.
   */
  async newestOf(root: string, lineageId: string): Promise<string | null> {
    const standalone = await this.standalone(root, { lineageId });
    if (standalone !== undefined) return standalone[0]?.id ?? null;
    const found = refuseLinks(root, await this.walk(root, undefined));
    for (let end = found.length; end > 0; end -= newestOfBatch) {
      const batch = found.slice(Math.max(0, end - newestOfBatch), end);
      const described = await Promise.all(batch.map((entry) => this.describe(entry)));
      for (let index = described.length - 1; index >= 0; index -= 1) {
        const entry = described[index];
        if (entry?.lineageId === lineageId) return entry.id;
      }
    }
    return null;
  }

  /** The file of checkpoint `id`: the location itself when it is a standalone checkpoint file. */
  async pathOf(root: string, id: string): Promise<string | undefined> {
    if (await this.standalone(root, {})) return root;
    return (await this.locate(root, id))?.path;
  }

  /** The listing of a standalone checkpoint file location (filtered by `query`); undefined for a directory. */
  async standalone(root: string, query: ListQuery): Promise<StoredCheckpoint[] | undefined> {
    if (query.branch !== undefined) branchDirectory(root, query.branch);
    const checkpoint = await standaloneCheckpoint(root, this.#maxCheckpointBytes);
    if (checkpoint === undefined) return undefined;
    const matches =
      (query.branch === undefined || checkpoint.branch === query.branch) &&
      (query.lineageId === undefined || checkpoint.lineageId === query.lineageId);
    return matches ? [checkpoint] : [];
  }

  /** Metadata of one file from its head (full parse only as a fallback); undefined and logged once when unreadable. */
  async describe(found: FoundCheckpoint): Promise<StoredCheckpoint | undefined> {
    const examined = await this.examine(found);
    if (examined !== undefined && 'unreadable' in examined) {
      this.reportUnreadable(examined.unreadable.reference, examined.unreadable.reason);
      return undefined;
    }
    return examined?.stored;
  }

  /**
   * {@link describe}, with the file named by its name and directory when it is unreadable; undefined
   * when it is gone. Logs nothing: the caller has the unreadable file in hand and decides whether it
   * skips it (and logs it with {@link reportUnreadable}) or shows it.
   */
  async examine(
    found: FoundCheckpoint,
  ): Promise<{ stored: StoredCheckpoint } | { unreadable: UnreadableCheckpoint } | undefined> {
    try {
      const { metadata, size } = await readMetadata(found.path, this.#maxCheckpointBytes, { checkEnd: true });
      assertMatchesName(metadata, found);
      return { stored: storedFile(metadata, found.path, size) };
    } catch (error) {
      if (errorCode(error) === 'ENOENT' || CrewlineError.hasCode(error, 'not_found')) return undefined;
      const size = await stat(found.path).then(
        (stats) => stats.size,
        () => undefined,
      );
      return {
        unreadable: {
          id: found.id,
          branch: found.branch,
          parentId: found.parentId,
          reference: found.path,
          ...(size === undefined ? {} : { sizeBytes: size }),
          reason: describeError(error),
        },
      };
    }
  }

  /** A branch directory as a reference: that branch's latest checkpoint (see file-reference.ts). */
  rootOfDirectory(directory: string): { location: string; id: string } | undefined {
    return branchDirectoryReference(directory, this.#maxCheckpointBytes, (path, error) =>
      this.reportUnreadable(path, error),
    );
  }

  /** Logs, once per file, that an unreadable checkpoint file was left out of what a call returned. */
  reportUnreadable(path: string, cause: unknown): void {
    if (this.#reported.has(path)) return;
    this.#reported.add(path);
    logger.warn(component, `skipping unreadable checkpoint file ${path}`, cause);
  }
}
