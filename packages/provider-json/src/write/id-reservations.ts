import type { CheckpointMetadata } from '@crewline/runtime-state';

/**
 * The ids this provider is writing now, per location: the id index learns of a checkpoint only once
 * its file is in place (see IdIndexKeeper.recordAfterWrite), so two writes of one id in flight at
 * once would both find it free and leave two files under one id (their names carry their parents).
 * A write holds its ids from before it asks the index until its entries are queued; a second write
 * of a held id waits for the first, then asks the index, which then knows of it. A synchronous write
 * cannot wait: it asks which checkpoint holds the id ({@link holderOf}). Another process is not seen
 * here: see stored-id-check.ts.
 */
export class IdReservations {
  readonly #held = new Map<string, { until: Promise<void>; metadata: CheckpointMetadata }>();

  /**
   * Waits until no write of this provider holds the id of any of `checkpoints` in `root`, then holds
   * them. Returns the release.
   */
  async hold(root: string, checkpoints: readonly CheckpointMetadata[]): Promise<() => void> {
    const keys = checkpoints.map((metadata) => `${root}\n${metadata.id}`);
    for (;;) {
      const busy = keys.flatMap((key) => this.#held.get(key)?.until ?? []);
      if (busy.length === 0) break;
      await Promise.all(busy);
    }
    let release!: () => void;
    const until = new Promise<void>((resolve) => {
      release = resolve;
    });
    for (const [index, key] of keys.entries()) this.#held.set(key, { until, metadata: checkpoints[index]! });
    return () => {
      for (const key of keys) if (this.#held.get(key)?.until === until) this.#held.delete(key);
      release();
    };
  }

  /** The checkpoint a write in flight holds `id` of `root` for, if any. */
  holderOf(root: string, id: string): CheckpointMetadata | undefined {
    return this.#held.get(`${root}\n${id}`)?.metadata;
  }
}
