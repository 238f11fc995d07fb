/**
 * Runs background tasks one after another: the file system work an async write leaves behind (its
 * id index entries, the spare temp files for the next writes) then holds at most one of the thread
 * pool's four threads. Started all at once, that work filled the pool just when the run, having made
 * its tool call in well under a millisecond, wrote its next group of checkpoints — whose writes and
 * fsyncs then queued behind it at the barrier. Urgent tasks (spares, which the next group needs) go
 * before the others still waiting (index entries, a hint nobody waits for); each kind keeps its
 * order. A task handles its own errors; a rejection is dropped so the tasks after it still run.
 */
export class SerialLane {
  readonly #urgent: (() => Promise<void>)[] = [];
  readonly #later: (() => Promise<void>)[] = [];
  #running: Promise<void> | undefined;

  /**
   * Queues `task`; an `urgent` one runs before the non-urgent tasks still waiting. The promise
   * settles (never rejects) once the task has finished.
   */
  run(task: () => Promise<void>, options: { urgent?: boolean } = {}): Promise<void> {
    const finished = new Promise<void>((resolve) => {
      (options.urgent ? this.#urgent : this.#later).push(() => task().finally(resolve));
    });
    this.#running ??= this.#drain();
    return finished;
  }

  async #drain(): Promise<void> {
    for (let task = this.#next(); task !== undefined; task = this.#next()) {
      try {
        await task();
      } catch {
        // The task reports its own failures.
      }
    }
    this.#running = undefined;
  }

  #next(): (() => Promise<void>) | undefined {
    return this.#urgent.shift() ?? this.#later.shift();
  }

  /** Resolves once every task queued so far, and any queued while waiting, has finished. */
  async idle(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }
}
