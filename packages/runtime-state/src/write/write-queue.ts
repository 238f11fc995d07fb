import { CrewlineError, logger } from '@crewline/events';
import { component } from '../errors.js';
import { loadedProvider } from '../lazy-provider.js';
import type { CheckpointProvider, CheckpointWrite, StoredCheckpoint } from '../provider.js';

/** A checkpoint taken for a write in the background, and how its outcome is reported. */
export interface QueuedWriteInput {
  provider: CheckpointProvider;
  location: string;
  write: CheckpointWrite;
  resolve: (stored: StoredCheckpoint) => void;
  reject: (error: unknown) => void;
  /**
   * Stores again, right before the checkpoint queued after it (and once more right after), the
   * checkpoint that one names as its parent (a fork's origin: see ForkOrigin). Best-effort: its failure goes to `reject` and
   * stops nothing else, since no queued checkpoint waits for it to be stored. Default `false`.
   */
  companion?: boolean;
}

interface QueuedWrite extends QueuedWriteInput {
  /** Order in which the writes were taken (a checkpoint is always taken after its parent). */
  sequence: number;
}

/**
 * The checkpoints a run takes for a write in the background (`RuntimeState.writeCheckpoint`),
 * written in the order they were taken, one group at a time: everything queued for one provider and
 * location goes as one `writeBatch` when the provider has it — the flushes of a group overlap, and
 * the run waits for one group instead of one write after another. Checkpoints still appear in
 * lineage order, so a crash can leave the newest unwritten but never one without its parent.
 *
 * When nothing is being written, a group starts at the end of this turn of the event loop, or at
 * once when the run reaches {@link durable}: the checkpoints of the events a run emits one after
 * another (a completed model call, then the tool call it asks for) then go in one group, and the
 * barrier waits for one round of flushes instead of a lone write followed by the rest. Deferring is
 * safe because a queued write holds its snapshot already (entities, inputs and the events taken at
 * its event, none changed afterwards); only their text is built later.
 */
export class WriteQueue {
  /** Writes not finished yet, oldest first; the first ones are being written. */
  #queued: QueuedWrite[] = [];
  #sequence = 0;
  /** The group of writes in flight, if any. */
  #writing: Promise<void> | undefined;
  /** A group start is scheduled for the end of this turn of the event loop (see {@link enqueue}). */
  #startScheduled = false;

  /** Queues a write; its group starts at the end of this turn of the event loop at the latest. */
  enqueue(input: QueuedWriteInput): void {
    this.#sequence += 1;
    this.#queued.push({ ...input, sequence: this.#sequence });
    if (this.#writing !== undefined || this.#startScheduled) return;
    this.#startScheduled = true;
    setImmediate(() => this.#writeNextGroup());
  }

  /**
   * Resolves once every write queued before the call has finished (stored, or failed and reported):
   * the barrier a run passes before it sends a model or tool call. At once when nothing is queued.
   */
  async durable(): Promise<void> {
    // A scheduled group starts now: the run is waiting for it anyway.
    if (this.#writing === undefined) this.#writeNextGroup();
    while (this.#writing !== undefined) await this.#writing;
  }

  /**
   * Writes, synchronously and in order, the checkpoints still queued for `provider` at `location`
   * (one in flight again, whole, under its own id): a strict checkpoint written synchronously while
   * automatic ones wait for the background would otherwise be on disk before its parents, and a
   * crash in between would leave it without them.
   *
   * Stops at the first that fails and returns that failure: the caller rejects its own checkpoint
   * first, then `rejectRest` the queued ones that were not stored.
   */
  writeAheadSync(
    provider: CheckpointProvider,
    location: string,
  ): { error: unknown; rejectRest: () => void } | undefined {
    const writeSync = provider.writeSync?.bind(provider);
    if (!writeSync) return undefined;
    // Queued through the stand-in of `provider` before its import ended: the same store (see loadedProvider).
    const ahead = this.#queued.filter(
      (entry) => loadedProvider(entry.provider) === provider && entry.location === location,
    );
    if (ahead.length === 0) return undefined;
    const taken = new Set(ahead);
    this.#queued = this.#queued.filter((entry) => !taken.has(entry));
    let stopped: { error: unknown; rest: QueuedWrite[] } | undefined;
    for (const [index, entry] of ahead.entries()) {
      try {
        entry.resolve(writeSync(location, entry.write));
      } catch (error) {
        if (entry.companion) {
          entry.reject(error);
          continue;
        }
        stopped = { error, rest: ahead.slice(index) };
        break;
      }
    }
    if (stopped === undefined) return undefined;
    const { error, rest } = stopped;
    return { error, rejectRest: () => this.#rejectWithDescendants(rest, error) };
  }

  /**
   * Writes, synchronously and in order, the checkpoints still queued (the process is exiting: no
   * promise will settle any more). A write in flight is written again whole, under its own id; a
   * provider without `writeSync` cannot, and its queued checkpoints are lost. Failures are logged.
   * A failure stops only its own chain: the checkpoints descending from the one that failed are not
   * written (each would be stored without its parent), those of other chains (another location of
   * the run) still are. Returns how many were written.
   */
  writePendingSync(): number {
    let written = 0;
    /** The checkpoints not written, and the failure that stopped each one's chain. */
    const stopped = new Map<string, unknown>();
    for (const { provider, location, write, companion } of this.#queued.splice(0)) {
      if (!provider.writeSync) continue;
      const { id, parentId } = write.metadata;
      if (parentId !== null && stopped.has(parentId)) {
        const failure = stopped.get(parentId);
        stopped.set(id, failure);
        logger.warn(
          component,
          `checkpoint ${id} was not written before exit: its parent ${parentId} was not written`,
          failure,
        );
        continue;
      }
      try {
        provider.writeSync(location, write);
        written += 1;
      } catch (error) {
        if (!companion) stopped.set(id, error);
        logger.warn(component, `checkpoint ${id} could not be written before exit`, error);
      }
    }
    return written;
  }

  #writeNextGroup(): void {
    this.#startScheduled = false;
    if (this.#writing !== undefined || this.#queued.length === 0) return;
    const first = this.#queued[0]!;
    let count = 1;
    // A companion (a fork's origin stored again) goes alone: where the origin is still stored, a
    // batch holding it would be refused as a whole (JSON, Postgres) and written again one by one.
    if (first.provider.writeBatch && !first.companion) {
      while (
        count < this.#queued.length &&
        this.#queued[count]!.provider === first.provider &&
        this.#queued[count]!.location === first.location &&
        !this.#queued[count]!.companion
      )
        count += 1;
    }
    const group = this.#queued.slice(0, count);
    this.#writing = this.#writeGroup(group).then(() => {
      const written = new Set(group);
      this.#queued = this.#queued.filter((entry) => !written.has(entry));
      this.#writing = undefined;
      // What queued up meanwhile goes at once: it has waited for a whole group already.
      this.#writeNextGroup();
    });
  }

  async #writeGroup(group: readonly QueuedWrite[]): Promise<void> {
    const first = group[0]!;
    if (group.length > 1 && first.provider.writeBatch) {
      try {
        const stored = await first.provider.writeBatch(
          first.location,
          group.map((entry) => entry.write),
        );
        for (const [index, entry] of group.entries()) entry.resolve(stored[index]!);
        return;
      } catch (error) {
        // A store that did not answer within its time limit (a silent outage) would make the first
        // write of the group wait the whole limit again: a run ending on Ctrl+C waited two limits.
        // One whose server answered a check (the group's connection alone was lost) takes them.
        if (
          CrewlineError.isInstance(error) &&
          error.details?.timedOut === true &&
          error.details.serverAnswered !== true
        ) {
          const queued = new Set(this.#queued);
          this.#rejectWithDescendants(
            group.filter((entry) => queued.has(entry)),
            error,
          );
          return;
        }
        // Written again one by one below, so that each checkpoint gets its own outcome.
      }
    }
    for (const [index, entry] of group.entries()) {
      try {
        entry.resolve(await entry.provider.write(entry.location, entry.write));
      } catch (error) {
        if (entry.companion) {
          entry.reject(error);
          continue;
        }
        // The ones after it are not written: each names the one before it as its parent, and a
        // checkpoint is never stored without its parent. Nor are those queued meanwhile that descend
        // from it. One taken out of the queue by a strict checkpoint meanwhile has its outcome there.
        const queued = new Set(this.#queued);
        this.#rejectWithDescendants(
          group.slice(index).filter((entry) => queued.has(entry)),
          error,
        );
        return;
      }
    }
  }

  /**
   * Rejects `failed` (checkpoints that were not stored) with `error`, together with every queued
   * checkpoint whose chain descends from one of them (queued meanwhile, naming a parent that then
   * failed): those are taken out of the queue and never written, so none is stored without its parent.
   * Newest first, so that the lineage goes back to the last checkpoint stored (see rejectNewestFirst).
   */
  #rejectWithDescendants(failed: readonly QueuedWrite[], error: unknown): void {
    if (failed.length === 0) return;
    // A companion stores again a checkpoint the run did not take: nothing queued waits for it.
    const doomed = new Set(
      failed.filter((entry) => !entry.companion).map((entry) => entry.write.metadata.id),
    );
    const taken = new Set(failed);
    const descendants: QueuedWrite[] = [];
    for (const entry of this.#queued) {
      const { id, parentId } = entry.write.metadata;
      if (taken.has(entry) || parentId === null || !doomed.has(parentId)) continue;
      doomed.add(id);
      descendants.push(entry);
    }
    const removed = new Set(descendants);
    this.#queued = this.#queued.filter((entry) => !removed.has(entry));
    const all = [...failed, ...descendants].sort((left, right) => left.sequence - right.sequence);
    rejectNewestFirst(all, error);
  }
}

/**
 * Rejects checkpoints that were not stored with `error`, newest first: each rejection gives the
 * lineage back to the checkpoint before it (see `fail` in WriteOutcomes.started), so it ends on
 * the last one stored and the next checkpoint names a stored parent.
 */
function rejectNewestFirst(entries: readonly QueuedWrite[], error: unknown): void {
  for (let index = entries.length - 1; index >= 0; index -= 1) entries[index]!.reject(error);
}
