import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { CrewlineError } from '@crewline/events';
import {
  type CheckpointMetadata,
  type CheckpointProvider,
  type CheckpointWrite,
  isValidBranchName,
  isValidCheckpointId,
  type ListQuery,
  PROVIDER_CONTRACT_VERSION,
  type PruneOptions,
  type PruneResult,
  planPrune,
  pruneOptionsProblem,
  type RawCheckpoint,
  type StoredCheckpoint,
  validateMetadata,
} from '@crewline/runtime-state';

/** Options of {@link MemoProvider}. */
export interface MemoProviderOptions {
  /**
   * The directory every `memo://<name>` location is kept under (`<root>/<name>/`). Relative paths
   * are resolved against the working directory when the provider is made. Default `'./.memo'`.
   */
  root?: string;
}

const component = 'memo-provider';
const scheme = 'memo://';
/** A location's name: what follows `memo://`. */
const locationName = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

function memoError(
  code: 'invalid_config' | 'invalid_name' | 'invalid_argument' | 'not_found' | 'conflict',
  message: string,
  details?: Record<string, unknown>,
) {
  return new CrewlineError(component, code, message, details === undefined ? {} : { details });
}

/** The listing stored under a checkpoint's id, if any (its meta file). */
function storedMeta(path: string): StoredCheckpoint | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as StoredCheckpoint;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Writes a file whole or not at all: a temporary file in the same directory, fsync'd, renamed. */
function writeAtomically(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.${Math.random().toString(16).slice(2)}.tmp`;
  const descriptor = openSync(temporary, 'w');
  try {
    writeSync(descriptor, text);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  renameSync(temporary, path);
}

/**
 * A checkpoint provider with locations of its own, `memo://<name>`: each is a directory under
 * `root` holding, per checkpoint, the document text (`<id>.json`) and its listing entry
 * (`<id>.meta.json`, written last: a checkpoint exists once its entry does). It shows what a
 * third-party provider needs and nothing more; the JSON, SQLite and Postgres providers are the
 * ones to use.
 */
export class MemoProvider implements CheckpointProvider {
  readonly kind = 'memo';
  readonly contractVersion = PROVIDER_CONTRACT_VERSION;
  readonly capabilities = { syncWrite: true, incremental: false, leases: false };
  /** The options in force: `root` absolute. Stored in checkpoints (no credentials) to rebuild it. */
  readonly options: Readonly<Required<MemoProviderOptions>>;

  constructor(options: MemoProviderOptions = {}) {
    if (options === null || typeof options !== 'object') {
      throw memoError('invalid_config', 'MemoProvider options must be an object such as { root: "./.memo" }');
    }
    for (const key of Object.keys(options)) {
      if (key !== 'root')
        throw memoError('invalid_config', `unknown MemoProvider option "${key}"; the only option is root`);
    }
    if (options.root !== undefined && (typeof options.root !== 'string' || options.root === '')) {
      throw memoError('invalid_config', 'MemoProvider root must be a non-empty directory path');
    }
    this.options = Object.freeze({ root: resolve(options.root ?? '.memo') });
  }

  /** True when `reference` is `memo://<name>` or `memo://<name>#<id>`. */
  static claims(reference: string): boolean {
    return reference.startsWith(scheme);
  }

  resolveLocation(location: string): string {
    this.#directory(location);
    return location;
  }

  parseReference(reference: string): { location: string; id?: string } | undefined {
    if (!reference.startsWith(scheme)) return undefined;
    const hash = reference.indexOf('#');
    const location = hash < 0 ? reference : reference.slice(0, hash);
    if (!locationName.test(location.slice(scheme.length))) return undefined;
    return hash < 0 ? { location } : { location, id: reference.slice(hash + 1) };
  }

  #directory(location: string): string {
    const name =
      typeof location === 'string' && location.startsWith(scheme) ? location.slice(scheme.length) : '';
    if (!locationName.test(name)) {
      throw memoError(
        'invalid_name',
        `location ${JSON.stringify(location)} is not a memo location; use memo://<name> (letters, digits, - and _)`,
      );
    }
    return join(this.options.root, name);
  }

  #files(location: string, id: string): { text: string; meta: string } {
    if (!isValidCheckpointId(id)) {
      throw memoError('invalid_name', `checkpoint id ${JSON.stringify(id)} is not a crewline checkpoint id`);
    }
    const directory = this.#directory(location);
    return { text: join(directory, `${id}.json`), meta: join(directory, `${id}.meta.json`) };
  }

  writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    const { metadata } = checkpoint;
    if (
      !isValidBranchName(metadata.branch) ||
      (metadata.parentId !== null && !isValidCheckpointId(metadata.parentId))
    ) {
      throw memoError(
        'invalid_name',
        `branch "${metadata.branch}" or parent "${metadata.parentId}" is not allowed`,
      );
    }
    const files = this.#files(location, metadata.id);
    // The contract: the same checkpoint again (a retried write) is stored once; another checkpoint
    // under a stored id is a conflict naming it, never a replacement (its children would lose their parent).
    const existing = storedMeta(files.meta);
    if (existing !== undefined) {
      const same =
        existing.lineageId === metadata.lineageId &&
        existing.branch === metadata.branch &&
        existing.parentId === metadata.parentId &&
        existing.eventCount === metadata.eventCount &&
        existing.createdAt === metadata.createdAt;
      if (same) return existing;
      throw memoError(
        'conflict',
        `checkpoint id "${metadata.id}" is already stored in ${location} with other content; checkpoint ids must be unique`,
        { duplicateId: metadata.id },
      );
    }
    mkdirSync(this.#directory(location), { recursive: true });
    const text = checkpoint.text();
    const stored: StoredCheckpoint = {
      ...metadata,
      reference: `${location}#${metadata.id}`,
      sizeBytes: Buffer.byteLength(text),
    };
    writeAtomically(files.text, text);
    writeAtomically(files.meta, JSON.stringify(stored));
    return stored;
  }

  async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    return this.writeSync(location, checkpoint);
  }

  async read(location: string, id: string): Promise<RawCheckpoint> {
    const files = this.#files(location, id);
    try {
      readFileSync(files.meta);
      return { text: readFileSync(files.text, 'utf8') };
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
      throw memoError(
        'not_found',
        `no checkpoint "${id}" in ${location}; run \`crewline checkpoint list ${location}\``,
      );
    }
  }

  async list(location: string, query: ListQuery = {}): Promise<StoredCheckpoint[]> {
    const directory = this.#directory(location);
    let names: string[];
    try {
      names = readdirSync(directory);
    } catch {
      return [];
    }
    const listed: StoredCheckpoint[] = [];
    for (const name of names) {
      if (!name.endsWith('.meta.json')) continue;
      let entry: StoredCheckpoint;
      try {
        const { reference, sizeBytes, ...stored } = JSON.parse(
          readFileSync(join(directory, name), 'utf8'),
        ) as StoredCheckpoint;
        const metadata: CheckpointMetadata = validateMetadata(stored);
        entry = { ...metadata, reference, ...(typeof sizeBytes === 'number' ? { sizeBytes } : {}) };
      } catch {
        // Removed while listing, or damaged: a listing shows what it can read.
        continue;
      }
      if (query.branch !== undefined && entry.branch !== query.branch) continue;
      if (query.lineageId !== undefined && entry.lineageId !== query.lineageId) continue;
      listed.push(entry);
    }
    return listed.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async latest(location: string, query?: ListQuery): Promise<StoredCheckpoint | undefined> {
    return (await this.list(location, query)).at(-1);
  }

  async prune(location: string, options: PruneOptions): Promise<PruneResult> {
    const problem = pruneOptionsProblem(options);
    if (problem !== undefined) throw memoError('invalid_argument', problem);
    const removed = planPrune(await this.list(location), options);
    if (!options.dryRun) for (const checkpoint of removed) await this.delete(location, checkpoint.id);
    return { removed, dryRun: options.dryRun === true };
  }

  async delete(location: string, id: string): Promise<boolean> {
    const files = this.#files(location, id);
    try {
      readFileSync(files.meta);
    } catch {
      return false;
    }
    // The entry goes first: a checkpoint half deleted is no longer listed.
    rmSync(files.meta, { force: true });
    rmSync(files.text, { force: true });
    return true;
  }
}
