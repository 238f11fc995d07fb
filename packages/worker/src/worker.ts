import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { CheckpointEventType } from '@crewline/events';
import { CrewlineError, logger } from '@crewline/events';
import { PostgresProvider } from '@crewline/provider-postgres';
import type { CheckpointProvider, StoredCheckpoint } from '@crewline/runtime-state';
import { AttemptEnds, type EndingAttempt } from './attempt-end.js';
import { parseQueueLocation } from './connection.js';
import { continuedSinceRead, refusalEnd, refusingContinuedSinceRead } from './continued-since-read.js';
import { component, workerError } from './errors.js';
import { type HeldRun, HoldKeeper } from './hold-keeper.js';
import { announcingLineageClaims, LineageRecorder } from './lineage-recording.js';
import { answerToDeliver, pauseAttempt } from './paused-runs.js';
import { QueueStore, RUNS_QUEUE } from './queue-store.js';
import { type AttemptOutcome, AttemptTracker, runAttempt } from './run-attempt.js';
import { RunClaims } from './run-claim.js';
import type { RunRow } from './run-record.js';
import { type RegisteredRun, RunRegistry } from './run-registry.js';
import { RunWake } from './run-wake.js';
import { UndeliveredRuns } from './undelivered-runs.js';
import { UnregisteredRuns } from './unregistered-runs.js';
import { type HoldChange, type WorkerOptions, workerTimings } from './worker-options.js';

// The options live with their checks; this module is where users and the tests look for them.
export type { HoldChange, WorkerOptions } from './worker-options.js';

/** A run a slot claimed, with the hold it claimed it under. */
interface TakenRun {
  row: RunRow;
  entry: RegisteredRun;
  token: string;
  /** `performance.now()` when the claim was sent (see HeldRun.confirmedAt). */
  claimSentAt: number;
  /** The pg-boss job that delivered it; none for a passed-over run taken by name. */
  jobId: string | undefined;
}

/** What {@link Worker.stopOnSignal} tells its caller. */
export interface StopOnSignalOptions {
  /** Called once, on the first signal, before the hand-back starts, with the runs being handed back. Default: none. */
  onSignal?: (signal: NodeJS.Signals, runIds: readonly string[]) => void;
}

/**
 * Takes runs from the queue up to its concurrency and runs them, checkpointing to Postgres under
 * the run's own lineage; renews its hold while they run; hands them back on {@link stop}; retries
 * the runs of workers that vanished once their hold ran out.
 */
export class Worker {
  readonly id = randomUUID().slice(0, 8);
  readonly #store: QueueStore;
  readonly #registry: RunRegistry;
  readonly #provider: CheckpointProvider;
  readonly #ownsProvider: boolean;
  readonly #concurrency: number;
  readonly #leaseTtlMs: number;
  readonly #pollIntervalMs: number;
  readonly #checkpointOn: readonly CheckpointEventType[] | '*';
  readonly #onHold: ((change: HoldChange) => void) | undefined;
  readonly #active = new Map<string, HeldRun>();
  readonly #ends: AttemptEnds;
  readonly #holds: HoldKeeper;
  readonly #description: string;
  readonly #unregistered: UnregisteredRuns;
  readonly #claims: RunClaims;
  readonly #undelivered: UndeliveredRuns;
  #slots: Promise<void>[] = [];
  #stopping = false;
  #timers: NodeJS.Timeout[] = [];
  #wake: (() => void)[] = [];
  /** A run was announced while no slot was idle: the next slot to go idle asks again at once. */
  #announced = false;
  readonly #runWake: RunWake;

  constructor(options: WorkerOptions) {
    const location = parseQueueLocation(options.location, options.schema);
    const timings = workerTimings(options);
    this.#concurrency = timings.concurrency;
    this.#leaseTtlMs = timings.leaseTtlMs;
    this.#pollIntervalMs = timings.pollIntervalMs;
    this.#checkpointOn = options.checkpointOn ?? '*';
    this.#registry = options.runs instanceof RunRegistry ? options.runs : new RunRegistry(options.runs);
    this.#store = new QueueStore(location, {
      poolSize: 2 + this.#concurrency,
      applicationName: 'crewline-worker',
      maintenance: true,
      create: true,
    });
    this.#ownsProvider = options.provider === undefined;
    this.#provider =
      options.provider ?? new PostgresProvider({ schema: location.schema, poolSize: 1 + this.#concurrency });
    this.#onHold = options.onHold;
    this.#ends = new AttemptEnds(this.#store, {
      baseMs: timings.retryDelayMs,
      maxMs: timings.maxRetryDelayMs,
    });
    this.#holds = new HoldKeeper(this.#store, this.#ends, this.#leaseTtlMs, this.#active);
    this.#runWake = new RunWake(location, () => this.#wakeIdleSlots());
    this.#description = `worker ${this.id} on ${hostname()}, pid ${process.pid}`;
    this.#unregistered = new UnregisteredRuns(this.#store, {
      worker: this.#description,
      registered: this.#registry.names(),
      baseDelayMs: timings.retryDelayMs,
    });
    this.#claims = new RunClaims(this.#store, {
      worker: this.#description,
      registered: () => this.#registry.names(),
      leaseTtlMs: this.#leaseTtlMs,
    });
    this.#undelivered = new UndeliveredRuns(this.#store, { claimGraceMs: this.#leaseTtlMs });
  }

  /** Runs being executed now. */
  get activeRunIds(): string[] {
    return [...this.#active.keys()];
  }

  /** Connects, creates what is missing, and starts taking runs. */
  async start(): Promise<void> {
    await this.#store.start();
    const reap = () => {
      if (this.#stopping) return;
      void this.#holds
        .reap()
        .catch((error) => logger.warn(component, 'retrying runs of vanished workers failed', error));
      // A worker that vanished between fetching a job and claiming its run left the run queued under
      // a job nothing delivers any more.
      void this.#undelivered
        .resend()
        .catch((error) => logger.warn(component, 're-sending runs whose job was lost failed', error));
    };
    const renew = () => void this.#holds.renewAll();
    const stopCancelled = () => {
      void this.#holds
        .stopCancelled()
        .catch((error) => logger.warn(component, 'checking the running runs for a cancel failed', error));
    };
    const jitter = Math.floor(Math.random() * 200);
    this.#timers.push(setInterval(reap, Math.floor(this.#leaseTtlMs / 2) + jitter));
    this.#timers.push(setInterval(renew, Math.max(100, Math.floor(this.#leaseTtlMs / 3))));
    this.#timers.push(setInterval(stopCancelled, this.#pollIntervalMs));
    reap();
    await this.#runWake.start();
    for (let slot = 0; slot < this.#concurrency; slot += 1) this.#slots.push(this.#slotLoop());
  }

  #wakeIdleSlots(): void {
    if (this.#wake.length === 0) this.#announced = true;
    for (const wake of this.#wake.splice(0)) wake();
  }

  /**
   * Stops taking runs. With `handBack` (what SIGTERM does) each running run lets its model call in
   * flight finish, checkpoints it and goes back to the queue, where another worker continues it;
   * without it the runs are finished first. Then closes the connections.
   */
  async stop(options: { handBack?: boolean } = {}): Promise<void> {
    this.#stopping = true;
    // Closed beside the hand-back, not before it: the hand-back never waits on the listener.
    const listenerClosed = this.#runWake.close();
    for (const wake of this.#wake.splice(0)) wake();
    if (options.handBack ?? true) for (const attempt of this.#active.values()) attempt.tracker.handBack();
    await Promise.allSettled([...this.#slots, listenerClosed]);
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    await this.#store.close();
    if (this.#ownsProvider) await this.#provider.close?.();
  }

  /**
   * Hands the runs back and stops on the first of `signals` (default SIGTERM and SIGINT); resolves
   * with that signal once stopped. This is the process's one listener for them on the worker's
   * side: a command around the worker learns of the signal through `onSignal` instead of listening
   * too. The listeners stay until the hand-back is done: the runtime, which also listens while a
   * run is active, raises the signal again (ending the process) when it finds no other listener, so
   * a `process.once` handler would let the process die before the hand-back. Later signals meanwhile
   * are ignored (each run is handed back once).
   */
  stopOnSignal(
    signals: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'],
    options: StopOnSignalOptions = {},
  ): Promise<NodeJS.Signals> {
    return new Promise((resolve, reject) => {
      let received: NodeJS.Signals | undefined;
      const onSignal = (signal: NodeJS.Signals) => {
        if (received !== undefined) return;
        received = signal;
        options.onSignal?.(signal, this.activeRunIds);
        const done = () => {
          for (const name of signals) process.off(name, onSignal);
        };
        this.stop({ handBack: true }).then(
          () => {
            done();
            resolve(signal);
          },
          (error) => {
            done();
            reject(error);
          },
        );
      };
      for (const name of signals) process.on(name, onSignal);
    });
  }

  async #slotLoop(): Promise<void> {
    while (!this.#stopping) {
      let taken: TakenRun | 'passed' | undefined;
      try {
        taken = await this.#take();
      } catch (error) {
        logger.warn(component, 'fetching a run failed; trying again', error);
      }
      if (taken === undefined) {
        await this.#idle();
        continue;
      }
      if (taken === 'passed') continue;
      try {
        await this.#handle(taken);
      } catch (error) {
        // Our own bookkeeping failed (the server went away): the run's hold runs out and another
        // worker (or this one) retries it.
        logger.warn(component, `handling run ${taken.row.id} failed`, error);
      }
    }
  }

  /**
   * Claims the next run for a slot: a passed-over run of a name this worker registers first (it was
   * delivered before any job still waiting, and only a worker with its name may take it), else the
   * run of the next job pg-boss delivers. `undefined` when there is none; `'passed'` when the job's
   * run was not this worker's to take (handed back, or a stale delivery), so the slot asks again.
   */
  async #take(): Promise<TakenRun | 'passed' | undefined> {
    const token = randomUUID();
    // The hold lasts at least `leaseTtlMs` from here on the server (see HeldRun.confirmedAt).
    let claimSentAt = performance.now();
    const passedOver = await this.#claims.passedOver(token);
    if (passedOver !== undefined) return this.#taken(passedOver, token, claimSentAt, undefined);
    const [job] = await this.#store.boss.fetch<{ runId: string }>(RUNS_QUEUE, {
      batchSize: 1,
      priority: true,
    });
    if (job === undefined) return undefined;
    // From here until the claim the job is `active` and the row `queued`: should this worker die or
    // fail a statement in between, the sweep of undelivered runs (see start) re-sends the run.
    const runId = job.data.runId;
    claimSentAt = performance.now();
    const row = await this.#claims.byJob(runId, job.id, token);
    if (row === undefined) {
      // A run of a name this worker does not register goes back to the queue for a worker that does;
      // anything else is a stale delivery: the run was cancelled, or already re-sent under another job.
      await this.#unregistered.handBack(runId, job.id);
      await this.#store.boss.complete(RUNS_QUEUE, job.id).catch(() => undefined);
      return 'passed';
    }
    return this.#taken(row, token, claimSentAt, job.id);
  }

  #taken(row: RunRow, token: string, claimSentAt: number, jobId: string | undefined): TakenRun {
    const entry = this.#registry.get(row.name);
    // Claims match registered names only, and a registry never forgets one.
    if (entry === undefined)
      throw workerError(
        'not_found',
        `run ${row.id} was claimed for "${row.name}", which the worker's runs registry no longer has; a registry only grows: register names, never rebuild it while the worker runs`,
      );
    return { row, entry, token, claimSentAt, jobId };
  }

  #idle(): Promise<void> {
    if (this.#announced) {
      this.#announced = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.#pollIntervalMs);
      const wake = this.#wake;
      function done() {
        clearTimeout(timer);
        const index = wake.indexOf(done);
        if (index >= 0) wake.splice(index, 1);
        resolve();
      }
      wake.push(done);
    });
  }

  async #handle(taken: TakenRun): Promise<void> {
    const { row, entry, token, claimSentAt, jobId } = taken;
    const runId = row.id;
    this.#onHold?.({ runId, change: 'claimed', attempt: row.attempts, at: Date.now() });
    const tracker = new AttemptTracker();
    const attempt: HeldRun = {
      runId,
      token,
      tracker,
      confirmedAt: claimSentAt,
      renewedTokens: { input: 0, output: 0 },
      confirmedTokens: { input: 0, output: 0 },
    };
    this.#active.set(runId, attempt);
    if (this.#stopping) tracker.handBack();
    const lineage = new LineageRecorder(this.#store, {
      runId,
      holderToken: token,
      lineageId: row.lineage_id,
    });
    tracker.onLineage = (lineageId) => lineage.recordSoon(lineageId);
    const timeout =
      row.timeout_ms !== null ? setTimeout(() => tracker.stop('timed-out'), row.timeout_ms) : undefined;
    let outcome: AttemptOutcome;
    try {
      outcome = await this.#execute(row, entry, tracker, lineage);
    } finally {
      if (timeout) clearTimeout(timeout);
      this.#active.delete(runId);
    }
    await lineage.settled();
    const released = await this.#finish(row, attempt, outcome);
    this.#onHold?.({ runId, change: 'released', outcome: released, attempt: row.attempts, at: Date.now() });
    // A run taken by name came with no job (its delayed one was withdrawn).
    if (jobId !== undefined) await this.#store.boss.complete(RUNS_QUEUE, jobId).catch(() => undefined);
  }

  async #execute(
    row: RunRow,
    entry: RegisteredRun,
    tracker: AttemptTracker,
    lineage: LineageRecorder,
  ): Promise<AttemptOutcome> {
    const location = this.#store.location.checkpointLocation;
    let latest: StoredCheckpoint | undefined;
    if (row.lineage_id !== null) {
      try {
        latest = await this.#provider.latest(location, { lineageId: row.lineage_id });
      } catch (error) {
        return { kind: 'failed', error, retryable: true };
      }
    }
    const restoreFrom = latest?.reference;
    const readAsLatest = latest && { runId: row.id, checkpointId: latest.id };
    // A forked run's first attempt branches off the forked run's checkpoint; later ones continue
    // the fork's own lineage like any run's.
    const fork =
      row.lineage_id === null && row.fork_from !== null
        ? {
            restoreFrom: row.fork_from,
            taskOutputs: row.task_outputs ?? {},
            ...(row.rerun_from ? { rerunFrom: row.rerun_from } : {}),
          }
        : undefined;
    const outcome = await runAttempt({
      entry,
      context: { runId: row.id, inputs: row.inputs, attempt: row.attempts },
      // The lineage is on the row before its head is claimed, so before any checkpoint of it exists.
      provider: announcingLineageClaims(
        refusingContinuedSinceRead(this.#provider, readAsLatest),
        (lineageId) => lineage.record(lineageId),
      ),
      location,
      restoreFrom,
      onEvents: this.#checkpointOn,
      leaseTtlMs: this.#leaseTtlMs,
      tracker,
      ...(fork ? { fork } : {}),
      humanInput: answerToDeliver(row, restoreFrom),
    });
    if (outcome.kind !== 'failed' || !continuedSinceRead(outcome.error)) return outcome;
    // Handed back for free only if the lineage really moved on (see refusalEnd).
    return refusalEnd(this.#provider, location, row.id, latest, outcome.error);
  }

  /**
   * Writes how the attempt ended, under this worker's hold; returns what happened to the run. An
   * attempt that no longer holds its run (cancelled or taken over meanwhile) still adds its tokens.
   */
  async #finish(
    row: RunRow,
    held: HeldRun,
    outcome: AttemptOutcome,
  ): Promise<NonNullable<HoldChange['outcome']>> {
    const attempt = this.#endingAttempt(row, held);
    const ended = await this.#endUnderHold(attempt, outcome);
    return ended === 'lost' ? this.#ends.recordUnheld(attempt) : ended;
  }

  #endingAttempt(row: RunRow, held: HeldRun): EndingAttempt {
    const { tracker } = held;
    const tokens = tracker.takeTokens();
    return {
      row,
      holderToken: held.token,
      inputTokens: tokens.input,
      outputTokens: tokens.output,
      // What the renewals carried: the end adds what the row did not count of it (AttemptEnds).
      renewedTokens: { ...held.renewedTokens },
      confirmedTokens: { ...held.confirmedTokens },
      lastCheckpoint: tracker.progress.lastCheckpoint ?? null,
      currentTask: tracker.progress.currentTask ?? null,
    };
  }

  async #endUnderHold(
    attempt: EndingAttempt,
    outcome: AttemptOutcome,
  ): Promise<NonNullable<HoldChange['outcome']>> {
    const { row } = attempt;
    if (outcome.kind === 'completed') return this.#ends.complete(attempt, outcome.output);
    if (outcome.kind === 'paused') return pauseAttempt(this.#store, attempt, outcome.pause);
    if (outcome.kind === 'stopped') {
      if (outcome.reason === 'cancelled') return this.#ends.recordCancelled(attempt);
      if (outcome.reason === 'lost') return 'lost';
      if (outcome.reason === 'timed-out') {
        const reason = `timed out after ${row.timeout_ms} ms (attempt ${row.attempts})`;
        return this.#ends.fail(attempt, reason, 'aborted');
      }
      return this.#ends.requeue(attempt, { waitMs: 0, failed: false });
    }
    const error = outcome.error;
    if (CrewlineError.hasCode(error, 'conflict') && typeof error.details?.expiresInMs === 'number') {
      // The lineage head is still held by a worker that vanished a moment ago (its lease has not run
      // out yet): not a failure of the run; come back when it has.
      return this.#ends.requeue(attempt, { waitMs: error.details.expiresInMs + 250, failed: false });
    }
    if (continuedSinceRead(error)) {
      // Another process continued the run since this worker read its latest checkpoint (a read of the
      // latest again confirmed it in #execute), and this attempt stored nothing after that read: not
      // a failure of the run (retries are for those), and the next attempt continues from the newest
      // checkpoint, which has already got further.
      return this.#ends.requeue(attempt, { waitMs: 0, failed: false });
    }
    return this.#ends.failOrRetry(attempt, outcome);
  }
}
