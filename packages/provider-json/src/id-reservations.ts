/**
 * The ids this provider is writing now, per location: the id index learns of a checkpoint only once
 * its file is in place (see IdIndexKeeper.recordAfterWrite), so two writes of one id in flight at
 * once would both find it free and leave two files under one id (their names carry their parents).
 * A write holds its ids from before it asks the index until its entries are queued; a second write
 * of a held id waits for the first, then asks the index, which then knows of it. Another process is
 * not seen here: see stored-id-check.ts.
 */
export class IdReservations {
  readonly #held = new Map<string, Promise<void>>();

  /** Waits until no write of this provider holds any of `ids` in `root`, then holds them. Returns the release. */
  async hold(root: string, ids: readonly string[]): Promise<() => void> {
    const keys = ids.map((id) => `${root}\n${id}`);
    for (;;) {
      const busy = keys.map((key) => this.#held.get(key)).filter((held) => held !== undefined);
      if (busy.length === 0) break;
      await Promise.all(busy);
    }
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    for (const key of keys) this.#held.set(key, held);
    return () => {
      for (const key of keys) if (this.#held.get(key) === held) this.#held.delete(key);
      release();
    };
  }
}
