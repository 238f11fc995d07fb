/** Something an update is written to: one open event stream of a page. */
export interface UpdateSink {
  send(event: string, data: unknown): Promise<void>;
}

/** What the pages are told when the location changed: its newest checkpoint and what left it. */
export interface CheckpointsChanged {
  latest: string | null;
  /** Ids deleted or pruned since the last look (by this server's runs or another process). */
  removed: string[];
}

export interface LiveUpdatesOptions {
  /** Id of the newest checkpoint in the location (cheap: asked on every tick). */
  latest: () => Promise<string | undefined>;
  /** Ids of every checkpoint in the location (a whole listing: asked every `listEvery` ticks). */
  ids: () => Promise<readonly string[]>;
  /** Called before pages are told about a change (drop cached listings). */
  onChange: () => void;
  intervalMs: number;
  /**
   * Every how many ticks the whole listing is compared with the last one, which is how a deletion
   * that leaves the newest checkpoint in place (a prune, `delete`, another process) is seen. Default 5.
   */
  listEvery?: number;
}

/**
 * Fans updates out to every open event stream (server-sent events) and watches the location while
 * a page listens: the newest checkpoint every `intervalMs` (a write by a run started here or by
 * another process), and the whole list of ids every `listEvery` ticks (deletions and prunes, which
 * need not change the newest). Pages are told `checkpoints` with what was removed.
 */
export class LiveUpdates {
  readonly #sinks = new Set<UpdateSink>();
  readonly #options: LiveUpdatesOptions;
  #seen: string | undefined;
  #ids: Set<string> | undefined;
  #started = false;
  #ticks = 0;
  #timer: NodeJS.Timeout | undefined;
  #polling = false;

  constructor(options: LiveUpdatesOptions) {
    this.#options = options;
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

  /**
   * Looks at the location now (what the timer does while someone listens). `force` also compares
   * the whole listing, whatever the tick.
   */
  async poll(force = false): Promise<void> {
    if (this.#polling || (!force && this.#sinks.size === 0)) return;
    this.#polling = true;
    try {
      const listEvery = Math.max(1, this.#options.listEvery ?? 5);
      const latest = await this.#options.latest();
      const removed: string[] = [];
      const listed = force || this.#ids === undefined || ++this.#ticks % listEvery === 0;
      if (listed) {
        const ids = new Set(await this.#options.ids());
        for (const id of this.#ids ?? []) if (!ids.has(id)) removed.push(id);
        this.#ids = ids;
      } else if (latest !== undefined) {
        // Known from now on, so that its deletion before the next whole listing is seen too.
        this.#ids?.add(latest);
      }
      if (this.#started && (latest !== this.#seen || removed.length > 0)) {
        this.#options.onChange();
        const change: CheckpointsChanged = { latest: latest ?? null, removed };
        this.broadcast('checkpoints', change);
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
