/**
 * Runs background tasks one after another, in the order given: the file system work an async
 * write leaves behind (its id index entries, the spare temp files for the next writes) then holds
 * at most one of the thread pool's four threads. Started all at once, that work filled the pool
 * just when the run, having made its tool call in well under a millisecond, wrote its next group of
 * checkpoints — whose writes and fsyncs then queued behind it at the barrier. A task handles its
 * own errors; a rejection is dropped so the tasks after it still run.
 */
export class SerialLane {
  #tail: Promise<void> = Promise.resolve();

  /** Queues `task` behind the tasks already queued. */
  run(task: () => Promise<void>): void {
    this.#tail = this.#tail.then(task).catch(() => undefined);
  }

  /** Resolves once every task queued so far, and any queued while waiting, has finished. */
  async idle(): Promise<void> {
    let tail: Promise<void>;
    do {
      tail = this.#tail;
      await tail;
    } while (tail !== this.#tail);
  }
}
