import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { CheckpointEventType } from '@crewline/events';
import { CrewlineError, logger } from '@crewline/events';
import { PostgresProvider } from '@crewline/provider-postgres';
import type { CheckpointProvider } from '@crewline/runtime-state';
import type pg from 'pg';
import type PgBoss from 'pg-boss';
import { retryDelayMs } from './backoff.js';
import { parseQueueLocation } from './connection.js';
import { component, messageOf, workerError } from './errors.js';
import { QueueStore, RUNS_QUEUE } from './queue-store.js';
import { type AttemptOutcome, AttemptTracker, runAttempt } from './run-attempt.js';
import type { RunRow } from './run-record.js';
import { type RunDefinitions, RunRegistry } from './run-registry.js';

export interface WorkerOptions {
  /** `postgres://user@host:5432/database` (`?schema=` optional; the password from PGPASSWORD or the URL). */
  location: string;
  /** Schema of the runs table and the checkpoints when the URL names none. Default `'crewline'`. */
  schema?: string;
  /** What runs this worker can execute, by name. */
  runs: RunRegistry | RunDefinitions;
  /** Runs executed at once. Default `1`. */
  concurrency?: number;
  /**
   * How long this worker's hold on a run (and on the run's lineage head) lasts without renewal; a
   * vanished worker's run is retried once it runs out. Renewed every third of it. Default `20000`.
   */
  leaseTtlMs?: number;
  /** How often an idle slot asks for a run. Default `500`. */
  pollIntervalMs?: number;
  /** Checkpoint triggers of the runs. Default `'*'` (every event: no completed model call is paid twice). */
  checkpointOn?: readonly CheckpointEventType[] | '*';
  /** The first retry waits this long, each next one twice as long. Default `1000`. */
  retryDelayMs?: number;
  /** Longest wait before a retry. Default `60000`. */
  maxRetryDelayMs?: number;
  /** The provider runs checkpoint through. Default: a `PostgresProvider` of this worker's own. */
  provider?: CheckpointProvider;
  /** Told of every hold this worker takes and gives up (for logs and tests). Default: none. */
  onHold?: (change: HoldChange) => void;
}

/** A hold on a run this worker took or gave up. */
export interface HoldChange {
  runId: string;
  change: 'claimed' | 'released';
  /** For `released`: how the attempt ended. */
  outcome?: 'completed' | 'failed' | 'retry' | 'handed-back' | 'cancelled' | 'lost';
  attempt: number;
  at: number;
}

interface ActiveAttempt {
  runId: string;
  token: string;
  tracker: AttemptTracker;
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
  readonly #retryDelayMs: number;
  readonly #maxRetryDelayMs: number;
  readonly #onHold: ((change: HoldChange) => void) | undefined;
  readonly #active = new Map<string, ActiveAttempt>();
  readonly #description: string;
  #slots: Promise<void>[] = [];
  #stopping = false;
  #timers: NodeJS.Timeout[] = [];
  #wake: (() => void)[] = [];

  constructor(options: WorkerOptions) {
    const location = parseQueueLocation(options.location, options.schema);
    this.#concurrency = positiveInteger(options.concurrency ?? 1, 'concurrency');
    this.#leaseTtlMs = positiveInteger(options.leaseTtlMs ?? 20_000, 'leaseTtlMs');
    if (this.#leaseTtlMs < 300) throw workerError('invalid_config', 'leaseTtlMs must be at least 300');
    this.#pollIntervalMs = positiveInteger(options.pollIntervalMs ?? 500, 'pollIntervalMs');
    this.#retryDelayMs = positiveInteger(options.retryDelayMs ?? 1000, 'retryDelayMs');
    this.#maxRetryDelayMs = positiveInteger(options.maxRetryDelayMs ?? 60_000, 'maxRetryDelayMs');
    this.#checkpointOn = options.checkpointOn ?? '*';
    this.#registry = options.runs instanceof RunRegistry ? options.runs : new RunRegistry(options.runs);
    this.#store = new QueueStore(location, {
      poolSize: 2 + this.#concurrency,
      applicationName: 'crewline-worker',
      maintenance: true,
    });
    this.#ownsProvider = options.provider === undefined;
    this.#provider =
      options.provider ?? new PostgresProvider({ schema: location.schema, poolSize: 1 + this.#concurrency });
    this.#onHold = options.onHold;
    this.#description = `worker ${this.id} on ${hostname()}, pid ${process.pid}`;
  }

  /** Runs being executed now. */
  get activeRunIds(): string[] {
    return [...this.#active.keys()];
  }

  /** Connects, creates what is missing, and starts taking runs. */
  async start(): Promise<void> {
    await this.#store.start();
    const reap = () => {
      void this.#reap().catch((error) =>
        logger.warn(component, 'retrying runs of vanished workers failed', error),
      );
    };
    const renew = () => void this.#renewAll();
    const jitter = Math.floor(Math.random() * 200);
    this.#timers.push(setInterval(reap, Math.floor(this.#leaseTtlMs / 2) + jitter));
    this.#timers.push(setInterval(renew, Math.max(100, Math.floor(this.#leaseTtlMs / 3))));
    reap();
    for (let slot = 0; slot < this.#concurrency; slot += 1) this.#slots.push(this.#slotLoop());
  }

  /**
   * Stops taking runs. With `handBack` (what SIGTERM does) each running run lets its model call in
   * flight finish, checkpoints it and goes back to the queue, where another worker continues it;
   * without it the runs are finished first. Then closes the connections.
   */
  async stop(options: { handBack?: boolean } = {}): Promise<void> {
    this.#stopping = true;
    for (const wake of this.#wake.splice(0)) wake();
    if (options.handBack ?? true) for (const attempt of this.#active.values()) attempt.tracker.handBack();
    await Promise.allSettled(this.#slots);
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    await this.#store.close();
    if (this.#ownsProvider) await this.#provider.close?.();
  }

  /**
   * Hands the runs back and stops on the first of `signals` (default SIGTERM and SIGINT); resolves
   * with that signal once stopped. The listeners stay until then: the runtime, which also listens
   * while a run is active, raises the signal again (ending the process) when it finds no other
   * listener, so a `process.once` handler would let the process die before the hand-back.
   */
  stopOnSignal(signals: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT']): Promise<NodeJS.Signals> {
    return new Promise((resolve, reject) => {
      let received: NodeJS.Signals | undefined;
      const onSignal = (signal: NodeJS.Signals) => {
        if (received !== undefined) return;
        received = signal;
        this.stop({ handBack: true }).then(
          () => {
            for (const name of signals) process.off(name, onSignal);
            resolve(signal);
          },
          (error) => {
            for (const name of signals) process.off(name, onSignal);
            reject(error);
          },
        );
      };
      for (const name of signals) process.on(name, onSignal);
    });
  }

  async #slotLoop(): Promise<void> {
    while (!this.#stopping) {
      let jobs: PgBoss.Job<{ runId: string }>[] = [];
      try {
        jobs = await this.#store.boss.fetch<{ runId: string }>(RUNS_QUEUE, { batchSize: 1, priority: true });
      } catch (error) {
        logger.warn(component, 'fetching a run failed; trying again', error);
      }
      const job = jobs[0];
      if (job === undefined) {
        await this.#idle();
        continue;
      }
      try {
        await this.#handle(job);
      } catch (error) {
        // Our own bookkeeping failed (the server went away): the run's hold runs out and another
        // worker (or this one) retries it.
        logger.warn(component, `handling run ${job.data.runId} failed`, error);
      }
    }
  }

  #idle(): Promise<void> {
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

  async #handle(job: PgBoss.Job<{ runId: string }>): Promise<void> {
    const runId = job.data.runId;
    const token = randomUUID();
    const claimed = await this.#store.pool.query<RunRow>(
      `UPDATE ${this.#store.table}
          SET status = 'running', attempts = attempts + 1, holder_token = $3, worker = $4,
              lease_expires_at = now() + $5 * interval '1 millisecond',
              started_at = coalesce(started_at, now()), updated_at = now()
        WHERE id = $1 AND job_id = $2 AND status = 'queued' RETURNING *`,
      [runId, job.id, token, this.#description, this.#leaseTtlMs],
    );
    const row = claimed.rows[0];
    if (row === undefined) {
      // A stale delivery: the run was cancelled, or already re-sent under another job.
      await this.#store.boss.complete(RUNS_QUEUE, job.id).catch(() => undefined);
      return;
    }
    this.#onHold?.({ runId, change: 'claimed', attempt: row.attempts, at: Date.now() });
    const tracker = new AttemptTracker();
    const attempt: ActiveAttempt = { runId, token, tracker };
    this.#active.set(runId, attempt);
    if (this.#stopping) tracker.handBack();
    let recordingLineage: Promise<unknown> = Promise.resolve();
    tracker.onLineage = (lineageId) => {
      recordingLineage = recordingLineage.then(() =>
        this.#store.pool
          .query(`UPDATE ${this.#store.table} SET lineage_id = $3 WHERE id = $1 AND holder_token = $2`, [
            runId,
            token,
            lineageId,
          ])
          .catch((error) => logger.warn(component, `recording the lineage of run ${runId} failed`, error)),
      );
    };
    const timeout =
      row.timeout_ms !== null ? setTimeout(() => tracker.stop('timed-out'), row.timeout_ms) : undefined;
    let outcome: AttemptOutcome;
    try {
      outcome = await this.#execute(row, tracker);
    } finally {
      if (timeout) clearTimeout(timeout);
      this.#active.delete(runId);
    }
    await recordingLineage;
    const released = await this.#finish(row, token, tracker, outcome);
    this.#onHold?.({ runId, change: 'released', outcome: released, attempt: row.attempts, at: Date.now() });
    await this.#store.boss.complete(RUNS_QUEUE, job.id).catch(() => undefined);
  }

  async #execute(row: RunRow, tracker: AttemptTracker): Promise<AttemptOutcome> {
    const entry = this.#registry.get(row.name);
    if (entry === undefined) {
      return {
        kind: 'failed',
        retryable: false,
        error: workerError(
          'not_found',
          `no crew or flow is registered as "${row.name}" in this worker (registered: ${this.#registry.names().join(', ') || 'none'}); register it in crewline.config.ts (runs) or in the Worker's runs`,
        ),
      };
    }
    const location = this.#store.location.checkpointLocation;
    let restoreFrom: string | undefined;
    if (row.lineage_id !== null) {
      try {
        restoreFrom = (await this.#provider.latest(location, { lineageId: row.lineage_id }))?.reference;
      } catch (error) {
        return { kind: 'failed', error, retryable: true };
      }
    }
    return runAttempt({
      entry,
      context: { runId: row.id, inputs: row.inputs, attempt: row.attempts },
      provider: this.#provider,
      location,
      restoreFrom,
      onEvents: this.#checkpointOn,
      leaseTtlMs: this.#leaseTtlMs,
      tracker,
    });
  }

  /** Writes how the attempt ended, under this worker's hold; returns what happened to the run. */
  async #finish(
    row: RunRow,
    token: string,
    tracker: AttemptTracker,
    outcome: AttemptOutcome,
  ): Promise<NonNullable<HoldChange['outcome']>> {
    const tokens = tracker.takeTokens();
    const progress = tracker.progress;
    const common = [
      row.id,
      token,
      tokens.input,
      tokens.output,
      progress.lastCheckpoint ?? null,
      progress.currentTask ?? null,
    ];
    const set = `input_tokens = input_tokens + $3, output_tokens = output_tokens + $4,
                 last_checkpoint = coalesce($5, last_checkpoint), current_task = coalesce($6, current_task),
                 holder_token = NULL, lease_expires_at = NULL, updated_at = now()`;
    const where = 'WHERE id = $1 AND holder_token = $2';
    const table = this.#store.table;
    if (outcome.kind === 'completed') {
      const done = await this.#store.pool.query(
        `UPDATE ${table} SET ${set}, status = 'completed', output = $7, error_code = NULL,
                worker = NULL, finished_at = now() ${where}`,
        [...common, outcome.output],
      );
      return done.rowCount === 1 ? 'completed' : 'lost';
    }
    if (outcome.kind === 'stopped') {
      if (outcome.reason === 'cancelled') return 'cancelled';
      if (outcome.reason === 'lost') return 'lost';
      if (outcome.reason === 'timed-out') {
        await this.#store.pool.query(
          `UPDATE ${table} SET ${set}, status = 'failed', error = $7, error_code = 'aborted', worker = NULL,
                  finished_at = now() ${where}`,
          [...common, `timed out after ${row.timeout_ms} ms (attempt ${row.attempts})`],
        );
        return 'failed';
      }
      return (await this.#requeue(row, common, set, 0, false)) ? 'handed-back' : 'lost';
    }
    const error = outcome.error;
    const held = typeof (error as CrewlineError)?.details?.expiresInMs === 'number';
    if (CrewlineError.hasCode(error, 'conflict') && held) {
      // The lineage head is still held by a worker that vanished a moment ago (its lease has not run
      // out yet): not a failure of the run; come back when it has.
      const waitMs = Number(error.details?.expiresInMs) + 250;
      return (await this.#requeue(row, common, set, waitMs, false)) ? 'retry' : 'lost';
    }
    const failures = row.failures + 1;
    if (!outcome.retryable || failures >= row.max_attempts) {
      const reason = outcome.retryable
        ? `${messageOf(error)} (failed ${failures} of ${row.max_attempts} attempts)`
        : messageOf(error);
      await this.#store.pool.query(
        `UPDATE ${table} SET ${set}, status = 'failed', failures = $7, error = $8, error_code = $9, worker = NULL,
                finished_at = now() ${where}`,
        [...common, failures, reason, CrewlineError.isInstance(error) ? error.code : null],
      );
      return 'failed';
    }
    const waitMs = retryDelayMs(failures, this.#retryDelayMs, this.#maxRetryDelayMs);
    return (await this.#requeue(row, common, set, waitMs, true, messageOf(error))) ? 'retry' : 'lost';
  }

  async #requeue(
    row: RunRow,
    common: unknown[],
    set: string,
    waitMs: number,
    failed: boolean,
    reason?: string,
  ): Promise<boolean> {
    return this.#store
      .transaction(async (client) => {
        const jobId = await this.#store.sendAttempt(
          client,
          { id: row.id, priority: row.priority, timeoutMs: row.timeout_ms },
          Math.ceil(waitMs / 1000),
        );
        const updated = await client.query(
          `UPDATE ${this.#store.table} SET ${set}, status = 'queued', worker = NULL, job_id = $7,
                failures = failures + $8, error = coalesce($9, error)
          WHERE id = $1 AND holder_token = $2`,
          [...common, jobId, failed ? 1 : 0, reason ?? null],
        );
        if (updated.rowCount !== 1) throw new RollBack();
        return true;
      })
      .catch((error) => {
        if (error instanceof RollBack) return false;
        throw error;
      });
  }

  /** Renews the hold on every running run and writes their progress; stops the ones cancelled or lost. */
  async #renewAll(): Promise<void> {
    await Promise.all(
      [...this.#active.values()].map(async (attempt) => {
        const { tracker } = attempt;
        const tokens = tracker.takeTokens();
        try {
          const { rows } = await this.#store.pool.query<{ status: string }>(
            `UPDATE ${this.#store.table}
                SET lease_expires_at = now() + $3 * interval '1 millisecond', input_tokens = input_tokens + $4,
                    output_tokens = output_tokens + $5, current_task = coalesce($6, current_task),
                    last_checkpoint = coalesce($7, last_checkpoint), updated_at = now()
              WHERE id = $1 AND holder_token = $2 AND status = 'running' RETURNING status`,
            [
              attempt.runId,
              attempt.token,
              this.#leaseTtlMs,
              tokens.input,
              tokens.output,
              tracker.progress.currentTask ?? null,
              tracker.progress.lastCheckpoint ?? null,
            ],
          );
          if (rows.length === 0) {
            const now = await this.#store.get(attempt.runId);
            tracker.stop(now?.status === 'cancelled' ? 'cancelled' : 'lost');
          }
        } catch (error) {
          // Counted again next time; the lineage lease still fences what the run writes.
          tracker.progress.inputTokens += tokens.input;
          tracker.progress.outputTokens += tokens.output;
          logger.warn(component, `renewing the hold on run ${attempt.runId} failed`, error);
        }
      }),
    );
  }

  /**
   * Runs whose holder stopped renewing (a worker killed, a machine gone): retried after a back-off,
   * from their latest checkpoint, by whichever worker takes the new job; failed once they used up
   * their attempts.
   */
  async #reap(): Promise<void> {
    if (this.#stopping) return;
    await this.#store.transaction(async (client: pg.PoolClient) => {
      const { rows } = await client.query<RunRow>(
        `SELECT * FROM ${this.#store.table} WHERE status = 'running' AND lease_expires_at < now()
          ORDER BY lease_expires_at LIMIT 20 FOR UPDATE SKIP LOCKED`,
      );
      for (const row of rows) {
        const failures = row.failures + 1;
        const reason = `${row.worker ?? 'its worker'} stopped renewing its hold (attempt ${row.attempts})`;
        if (failures >= row.max_attempts) {
          await client.query(
            `UPDATE ${this.#store.table} SET status = 'failed', failures = $2, error = $3, error_code = 'aborted',
                    holder_token = NULL, lease_expires_at = NULL, worker = NULL, finished_at = now(), updated_at = now()
              WHERE id = $1`,
            [row.id, failures, `${reason}; gave up after ${failures} of ${row.max_attempts} attempts`],
          );
          continue;
        }
        const waitMs = retryDelayMs(failures, this.#retryDelayMs, this.#maxRetryDelayMs);
        const jobId = await this.#store.sendAttempt(
          client,
          { id: row.id, priority: row.priority, timeoutMs: row.timeout_ms },
          Math.ceil(waitMs / 1000),
        );
        await client.query(
          `UPDATE ${this.#store.table} SET status = 'queued', failures = $2, error = $3, job_id = $4,
                  holder_token = NULL, lease_expires_at = NULL, worker = NULL, updated_at = now()
            WHERE id = $1`,
          [row.id, failures, reason, jobId],
        );
      }
    });
  }
}

class RollBack extends Error {}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw workerError(
      'invalid_config',
      `${name} must be a whole number of at least 1, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}
