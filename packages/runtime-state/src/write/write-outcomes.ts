import {
  CheckpointCompletedEvent,
  CheckpointFailedEvent,
  CheckpointPrunedEvent,
  CheckpointStartedEvent,
  CrewlineError,
  type EventBus,
  logger,
  type RunState,
} from '@crewline/events';
import { component } from '../errors.js';
import type { CheckpointProvider, CheckpointWrite, StoredCheckpoint } from '../provider.js';
import type { TakenCheckpoint, WriteOptions } from './checkpoint-preparation.js';
import type { Lineage } from './run-lineage.js';
import type { HeldLease, WriteTarget } from './write-target.js';

/** The run whose writes end here (RuntimeState, seen from here): the source and state of each event. */
export interface ReportingRun extends RunState {
  readonly lineage: Readonly<Lineage>;
  readonly lease: HeldLease | undefined;
}

/** A checkpoint taken for a write, and how the end of its write is reported: what a write path writes. */
export interface PreparedWrite extends WriteTarget {
  write: CheckpointWrite;
  /** A fork's origin, written again right before `write` and once more right after it (see ForkOrigin). */
  companion: CheckpointWrite | undefined;
  /** Reports the write stored (the run's last stored, its completed event, the prune it asked for). */
  succeed(stored: StoredCheckpoint): StoredCheckpoint;
  /** Reports the write failed (the lease lost on a conflict, the lineage undone, a failed event); throws `error`. */
  fail(error: unknown): never;
}

/**
 * `bus.wants(type)`; true when the bus comes from an older copy of `@crewline/events` without that
 * method (copies share one bus), so its listeners still get every event.
 */
function busWants(bus: EventBus, type: string): boolean {
  return typeof bus.wants !== 'function' || bus.wants(type);
}

/**
 * How the writes of a run end: the lifecycle events each reports, the run's last stored checkpoint,
 * the prune a write asks for, and the writes and prunes still in flight (what `RuntimeState.settle`
 * waits for).
 */
export class WriteOutcomes {
  readonly #run: ReportingRun;
  /**
   * The bus the run was given: its writes report where its forks do, not to what a subclass's `bus`
   * getter answers.
   */
  readonly #bus: EventBus;
  #lastStored: StoredCheckpoint | undefined;
  #pending = new Set<Promise<unknown>>();

  constructor(run: ReportingRun, bus: EventBus) {
    this.#run = run;
    this.#bus = bus;
  }

  /** The last checkpoint the run stored, or `undefined` before its first write (see `RuntimeState.lastStored`). */
  get lastStored(): StoredCheckpoint | undefined {
    return this.#lastStored;
  }

  /** Reports the write of `taken` started, and gives it with how its end is reported. */
  started(taken: TakenCheckpoint, options: WriteOptions): PreparedWrite {
    const run = this.#run;
    const bus = this.#bus;
    const { provider, resolvedLocation, trigger, metadata, write, companion, undoLineage } = taken;
    const base = {
      location: resolvedLocation,
      provider: provider.kind,
      trigger,
      branch: metadata.branch,
      parentId: metadata.parentId,
    };
    // Lifecycle events are for observers only (a run does not record them): built when one listens.
    if (busWants(bus, CheckpointStartedEvent.type)) bus.emit(run, new CheckpointStartedEvent(base), run);
    const started = performance.now();
    const succeed = (stored: StoredCheckpoint) => {
      this.#lastStored = stored;
      if (busWants(bus, CheckpointCompletedEvent.type)) {
        bus.emit(
          run,
          new CheckpointCompletedEvent({
            ...base,
            checkpointId: stored.id,
            reference: stored.reference,
            durationMs: performance.now() - started,
          }),
          run,
        );
      }
      if (options.maxCheckpoints !== undefined)
        this.#prune(provider, resolvedLocation, options.maxCheckpoints);
      return stored;
    };
    const fail = (error: unknown): never => {
      if (write.lease !== undefined && CrewlineError.hasCode(error, 'conflict')) run.lease?.onLost?.(error);
      undoLineage();
      bus.emit(run, new CheckpointFailedEvent({ ...base, error: describe(error) }), run);
      throw error;
    };
    return { provider, resolvedLocation, write, companion, succeed, fail };
  }

  /** Logs that a fork's origin could not be stored again (best-effort: the fork's checkpoint is stored). */
  companionFailed(companion: CheckpointWrite, location: string, error: unknown): void {
    logger.warn(
      component,
      `checkpoint ${companion.metadata.id}, which branch "${this.#run.lineage.branch}" was forked from, could not be stored again in ${location}; if its run pruned it, the fork's first checkpoint there names a missing parent`,
      error,
    );
  }

  #prune(provider: CheckpointProvider, location: string, keep: number): void {
    const run = this.#run;
    const { branch, lineageId } = run.lineage;
    // Retention is this run's own business: other runs in the same location (and on the same branch)
    // keep every checkpoint, and so do fork points and the run's newest (see planPrune).
    const pruning = provider
      .prune(location, { keep, lineageId })
      .then((result) => {
        if (result.removed.length > 0) {
          this.#bus.emit(
            run,
            new CheckpointPrunedEvent({
              location,
              provider: provider.kind,
              branch,
              removedCount: result.removed.length,
              maxCheckpoints: keep,
            }),
            run,
          );
        }
      })
      .catch((error: unknown) =>
        logger.warn(component, `pruning ${location} (run ${lineageId} on branch ${branch}) failed`, error),
      );
    this.track(pruning);
  }

  /** Counts `promise` as work of the run in flight until it settles. */
  track(promise: Promise<unknown>): void {
    this.#pending.add(promise);
    void promise.finally(() => this.#pending.delete(promise));
  }

  /** True while a write or prune of the run is in flight. */
  get hasPendingWork(): boolean {
    return this.#pending.size > 0;
  }

  /** Waits for the run's writes and prunes in flight, and those they start meanwhile. */
  async settle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
