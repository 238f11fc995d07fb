import { stateError } from './errors.js';
import {
  type CheckpointProvider,
  type CheckpointWrite,
  type ListQuery,
  PROVIDER_CONTRACT_VERSION,
  type ProviderCapabilities,
  type PruneOptions,
  type PruneResult,
  type RawCheckpoint,
  type StoredCheckpoint,
} from './provider.js';

const loading: ProviderCapabilities = { syncWrite: false, incremental: false, leases: false };

/**
 * Stands for a provider whose package is imported on first use (what `ProviderRegistry.provider`
 * gives for SQLite, chosen from a `.db` location when a config names no provider), so that a config
 * can be resolved synchronously and a project that never checkpoints to SQLite never loads
 * better-sqlite3. Until the import finished it declares no synchronous writes (automatic checkpoints
 * then wait for it); the runtime awaits {@link readyProvider} before a run starts, which also
 * reports a missing package at kickoff.
 */
export class LazyProvider implements CheckpointProvider {
  readonly contractVersion = PROVIDER_CONTRACT_VERSION;
  readonly #load: () => Promise<CheckpointProvider>;
  readonly #find: () => CheckpointProvider | undefined;
  #loaded: CheckpointProvider | undefined;
  #loading: Promise<CheckpointProvider> | undefined;

  /**
   * @param kind the provider kind it stands for (`'sqlite'`, a registry entry's name).
   * @param load imports the package and gives the provider (rejects with `provider_unavailable`).
   * @param find the provider when its package is already imported, without waiting.
   */
  constructor(
    readonly kind: string,
    load: () => Promise<CheckpointProvider>,
    find: () => CheckpointProvider | undefined,
  ) {
    this.#load = load;
    this.#find = find;
  }

  /** The real provider, imported now if needed. */
  async ready(): Promise<CheckpointProvider> {
    const current = this.#current();
    if (current) return current;
    this.#loading ??= this.#load().then(
      (provider) => {
        this.#loaded = provider;
        return provider;
      },
      (error: unknown) => {
        // Not remembered: installing the package and trying again in the same process works.
        this.#loading = undefined;
        throw error;
      },
    );
    return this.#loading;
  }

  /** The real provider once its package is imported (without waiting); `undefined` before. */
  get loaded(): CheckpointProvider | undefined {
    return this.#current();
  }

  #current(): CheckpointProvider | undefined {
    this.#loaded ??= this.#find();
    return this.#loaded;
  }

  get capabilities(): ProviderCapabilities {
    return this.#current()?.capabilities ?? loading;
  }

  resolveLocation(location: string): string {
    return this.#current()?.resolveLocation(location) ?? location;
  }

  parseReference(reference: string) {
    return this.#current()?.parseReference(reference);
  }

  writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    const current = this.#current();
    if (!current?.writeSync) {
      throw stateError(
        'provider_unavailable',
        `the ${this.kind} provider for "${location}" is still being loaded; write with acheckpoint(), or kick the run off first`,
      );
    }
    return current.writeSync(location, checkpoint);
  }

  async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    return (await this.ready()).write(location, checkpoint);
  }

  async read(location: string, id: string): Promise<RawCheckpoint> {
    return (await this.ready()).read(location, id);
  }

  async list(location: string, query?: ListQuery): Promise<StoredCheckpoint[]> {
    return (await this.ready()).list(location, query);
  }

  async latest(location: string, query?: ListQuery): Promise<StoredCheckpoint | undefined> {
    return (await this.ready()).latest(location, query);
  }

  async prune(location: string, options: PruneOptions): Promise<PruneResult> {
    return (await this.ready()).prune(location, options);
  }

  async delete(location: string, id: string): Promise<boolean> {
    return (await this.ready()).delete(location, id);
  }

  async close(): Promise<void> {
    await this.#loaded?.close?.();
  }
}

/** The real provider behind a config's provider (a {@link LazyProvider} is imported now). */
export async function readyProvider(provider: CheckpointProvider): Promise<CheckpointProvider> {
  return provider instanceof LazyProvider ? provider.ready() : provider;
}

/**
 * The provider a write goes through: the real one behind a stand-in whose package is imported, else
 * `provider` itself. Why: a run keeps the parent of its next checkpoint, its background writes and its
 * lease per provider object, and meets both the stand-in (a setting resolved before the import ended)
 * and the real provider (what a run's own config is made) for one store: two chains in one store.
 */
export function loadedProvider(provider: CheckpointProvider): CheckpointProvider {
  return provider instanceof LazyProvider ? (provider.loaded ?? provider) : provider;
}
