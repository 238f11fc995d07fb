/** Something an update is written to: one open event stream of a page. */
export interface UpdateSink {
  send(event: string, data: unknown): Promise<void>;
}

/**
 * Fans updates out to every open event stream (server-sent events) and watches the location for new
 * checkpoints: while a page listens, it asks the provider for the newest checkpoint every
 * `intervalMs` and tells the pages when it changed (another process, or a run started here, wrote).
 */
export class LiveUpdates {
  readonly #sinks = new Set<UpdateSink>();
  readonly #latest: () => Promise<string | undefined>;
  readonly #onChange: () => void;
  #seen: string | undefined;
  #started = false;
  #timer: NodeJS.Timeout | undefined;
  #polling = false;

  constructor(options: {
    /** Id of the newest checkpoint in the location. */
    latest: () => Promise<string | undefined>;
    /** Called before pages are told about new checkpoints (drop cached listings). */
    onChange: () => void;
    intervalMs: number;
  }) {
    this.#latest = options.latest;
    this.#onChange = options.onChange;
    this.#timer = setInterval(() => void this.poll(), options.intervalMs);
    this.#timer.unref();
  }

  get listeners(): number {
    return this.#sinks.size;
  }

  add(sink: UpdateSink): () => void {
    this.#sinks.add(sink);
    return () => this.#sinks.delete(sink);
  }

  broadcast(event: string, data: unknown): void {
    for (const sink of this.#sinks) sink.send(event, data).catch(() => this.#sinks.delete(sink));
  }

  /** Checks for new checkpoints now (also what the timer does while someone listens). */
  async poll(force = false): Promise<void> {
    if (this.#polling || (!force && this.#sinks.size === 0)) return;
    this.#polling = true;
    try {
      const latest = await this.#latest();
      if (this.#started && latest !== this.#seen) {
        this.#onChange();
        this.broadcast('checkpoints', { latest: latest ?? null });
      }
      this.#seen = latest;
      this.#started = true;
    } catch {
      // A location briefly unreadable (a writer mid-transaction) is tried again on the next tick.
    } finally {
      this.#polling = false;
    }
  }

  close(): void {
    clearInterval(this.#timer);
    this.#sinks.clear();
  }
}
