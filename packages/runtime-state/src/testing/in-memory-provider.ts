import { stateError } from '../errors.js';
import { isValidBranchName, isValidCheckpointId } from '../ids.js';
import type {
  CheckpointProvider,
  CheckpointWrite,
  ListQuery,
  PruneOptions,
  PruneResult,
  RawCheckpoint,
  StoredCheckpoint,
} from '../provider.js';
import { PROVIDER_CONTRACT_VERSION } from '../provider.js';
import { planPrune, pruneOptionsProblem } from '../prune-plan.js';

interface Entry {
  info: StoredCheckpoint;
  text: string;
}

/**
 * A provider that keeps checkpoints in memory, for tests of your own crews and flows. Locations are
 * independent namespaces; nothing touches the disk.
 */
export class InMemoryProvider implements CheckpointProvider {
  readonly kind = 'memory';
  readonly contractVersion = PROVIDER_CONTRACT_VERSION;
  readonly capabilities = { syncWrite: true, incremental: false, leases: false };
  readonly #stores = new Map<string, Entry[]>();

  resolveLocation(location: string): string {
    return location;
  }

  parseReference(reference: string): { location: string; id?: string } | undefined {
    const hash = reference.lastIndexOf('#');
    if (hash < 0) return this.#stores.has(reference) ? { location: reference } : undefined;
    return { location: reference.slice(0, hash), id: reference.slice(hash + 1) };
  }

  writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    const { metadata } = checkpoint;
    if (
      !isValidCheckpointId(metadata.id) ||
      !isValidBranchName(metadata.branch) ||
      (metadata.parentId !== null && !isValidCheckpointId(metadata.parentId))
    ) {
      throw stateError(
        'invalid_name',
        `checkpoint id "${metadata.id}", parent "${metadata.parentId}" or branch "${metadata.branch}" is not allowed`,
      );
    }
    const text = checkpoint.text();
    const info: StoredCheckpoint = {
      ...metadata,
      reference: `${location}#${metadata.id}`,
      sizeBytes: Buffer.byteLength(text),
    };
    // Writing the same id again replaces it (a retried write), as a file or a keyed row would.
    const entries = (this.#stores.get(location) ?? []).filter((entry) => entry.info.id !== metadata.id);
    entries.push({ info: structuredClone(info), text });
    this.#stores.set(location, entries);
    return info;
  }

  async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    return this.writeSync(location, checkpoint);
  }

  async read(location: string, id: string): Promise<RawCheckpoint> {
    const entry = this.#stores.get(location)?.find((candidate) => candidate.info.id === id);
    if (!entry) throw stateError('not_found', `no checkpoint "${id}" in memory location "${location}"`);
    return { text: entry.text };
  }

  async list(location: string, query: ListQuery = {}): Promise<StoredCheckpoint[]> {
    return (this.#stores.get(location) ?? [])
      .map((entry) => structuredClone(entry.info))
      .filter(
        (info) =>
          (query.branch === undefined || info.branch === query.branch) &&
          (query.lineageId === undefined || info.lineageId === query.lineageId),
      )
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async latest(location: string, query?: ListQuery): Promise<StoredCheckpoint | undefined> {
    return (await this.list(location, query)).at(-1);
  }

  /**
   * Per branch, removes a checkpoint when it is beyond the newest `keep` AND older than `olderThan`
   * (with one option, that option alone decides). `olderThan` alone never removes a branch's newest
   * checkpoint, so every branch stays resumable; `keep` must be at least 1 for the same reason.
   */
  async prune(location: string, options: PruneOptions): Promise<PruneResult> {
    const problem = pruneOptionsProblem(options);
    if (problem !== undefined) throw stateError('invalid_argument', problem);
    const removed = planPrune(await this.list(location), options);
    if (!options.dryRun) {
      const ids = new Set(removed.map((info) => info.id));
      this.#stores.set(
        location,
        (this.#stores.get(location) ?? []).filter((entry) => !ids.has(entry.info.id)),
      );
    }
    return { removed, dryRun: options.dryRun ?? false };
  }

  async delete(location: string, id: string): Promise<boolean> {
    const entries = this.#stores.get(location);
    if (!entries) return false;
    const next = entries.filter((entry) => entry.info.id !== id);
    this.#stores.set(location, next);
    return next.length !== entries.length;
  }
}
