import { randomUUID } from 'node:crypto';
import { PostgresProvider } from '@crewline/provider-postgres';
import { connectionLostWithin, refusalMayPass } from '@crewline/provider-postgres/internal';
import { type ModelPrices, parseModelPrices } from '@crewline/runtime-state';
import { z } from 'zod';
import { parseQueueLocation } from './connection.js';
import { workerError } from './errors.js';
import { type ResumeRunOptions, resumePausedRun } from './paused-runs.js';
import { QueueStore, RUNS_QUEUE } from './queue-store.js';
import { type ForkRunOptions, forkRun } from './run-fork.js';
import { parseOptions, runLimitsSchema } from './run-options.js';
import { type RunProgress, readRunProgress } from './run-progress.js';
import { type RunRecord, type RunRow, type RunStatus, recordOf, runStatuses } from './run-record.js';
import { assertRunName } from './run-registry.js';

export interface RunQueueOptions {
  /** `postgres://user@host:5432/database` (`?schema=` optional; the password from PGPASSWORD or the URL). */
  location: string;
  /** Schema of the runs table and the checkpoints when the URL names none. Default `'crewline'`. */
  schema?: string;
  /** Most connections this client opens. Default `4`. */
  poolSize?: number;
  /**
   * What models cost, in US dollars per million tokens, by model id (the `modelPrices` of
   * crewline.config.ts): {@link RunQueue.progress} prices a run's tokens with them. Default: none, so
   * every model but the offline one has an unknown cost.
   */
  modelPrices?: ModelPrices;
  /**
   * Creates the queue (its schema, runs table and pg-boss's tables) when it does not exist yet. Default
   * `false`: a queue is created by the first {@link Worker} that starts on the location, and this client
   * refuses one that does not exist with a typed `not_found` naming the schema (a misspelt `?schema=`
   * would otherwise list an empty queue, or queue runs no worker ever reads).
   */
  create?: boolean;
}

export interface EnqueueOptions {
  /** Kickoff inputs of the crew or flow. Default `{}`. */
  inputs?: Record<string, unknown>;
  /**
   * The same key enqueued again returns the run it made the first time (whatever its status); a key
   * used for another name, or for a fork, is a typed `conflict`. Default: none.
   */
  idempotencyKey?: string;
  /** Higher runs are taken first. Default `0`. */
  priority?: number;
  /** An attempt running longer is stopped and the run fails (unretried). Default: no limit. */
  timeoutMs?: number;
  /** Failed attempts (crashes of the run, not of its worker... see README) before the run fails. Default `5`. */
  maxAttempts?: number;
}

export interface EnqueueResult {
  run: RunRecord;
  /** False when the idempotency key named a run enqueued before. */
  created: boolean;
}

export interface ListRunsOptions {
  status?: RunStatus;
  /** Newest first, at most this many. Default `50`. */
  limit?: number;
}

const enqueueSchema = runLimitsSchema.extend({
  inputs: z.record(z.string(), z.unknown()).optional(),
});

/** Enqueues, lists, shows and cancels runs. Workers take them (see {@link Worker}). */
export class RunQueue {
  readonly #store: QueueStore;
  /** Reads the runs' checkpoints for {@link progress}; opened on first use. */
  #provider: PostgresProvider | undefined;
  readonly #modelPrices: ModelPrices;

  constructor(options: RunQueueOptions) {
    const location = parseQueueLocation(options.location, options.schema);
    this.#modelPrices = parseModelPrices(options.modelPrices, 'RunQueue option modelPrices');
    this.#store = new QueueStore(location, {
      poolSize: options.poolSize ?? 4,
      applicationName: 'crewline-queue',
      maintenance: false,
      create: options.create ?? false,
    });
  }

  /** Queues a run of the crew or flow registered as `name`. */
  async enqueue(name: string, options: EnqueueOptions = {}): Promise<EnqueueResult> {
    assertRunName(name);
    parseOptions(enqueueSchema, options, `enqueue("${name}")`);
    let inputsText: string;
    try {
      inputsText = JSON.stringify(options.inputs ?? {});
    } catch (error) {
      throw workerError('invalid_argument', `enqueue("${name}"): inputs must be JSON (plain values)`, {
        cause: error,
      });
    }
    await this.#store.start('enqueue');
    const store = this.#store;
    return store.transaction(async (client) => {
      const id = randomUUID();
      const inserted = await client.query<RunRow>(
        `INSERT INTO ${store.table} (id, name, inputs, idempotency_key, priority, timeout_ms, max_attempts, status)
         VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, 'queued')
         ON CONFLICT (idempotency_key) DO NOTHING RETURNING *`,
        [
          id,
          name,
          inputsText,
          options.idempotencyKey ?? null,
          options.priority ?? 0,
          options.timeoutMs ?? null,
          options.maxAttempts ?? 5,
        ],
      );
      const row = inserted.rows[0];
      if (row === undefined) {
        // The key was used before (possibly by a transaction that committed after our snapshot began:
        // ON CONFLICT waited for it, so this read sees it).
        const existing = await client.query<RunRow>(
          `SELECT * FROM ${store.table} WHERE idempotency_key = $1`,
          [options.idempotencyKey],
        );
        const found = existing.rows[0];
        if (found === undefined)
          throw workerError('conflict', `enqueue("${name}"): idempotency key race; try again`);
        if (found.fork_of !== null) {
          // A fork's key names a fork, not this enqueue: returning the fork would hand back a run
          // with other inputs (and a checkpoint to start from) as if it were the one asked for.
          throw workerError(
            'conflict',
            `enqueue("${name}"): idempotency key ${JSON.stringify(options.idempotencyKey)} was used for run ${found.id}, a fork of run ${found.fork_of} (queue.fork), not for an enqueue; use another key`,
          );
        }
        if (found.name !== name) {
          throw workerError(
            'conflict',
            `idempotency key ${JSON.stringify(options.idempotencyKey)} was used for a run of "${found.name}" (${found.id}), not "${name}"; use another key`,
          );
        }
        return { run: recordOf(found), created: false };
      }
      const jobId = await store.sendAttempt(client, {
        id,
        priority: row.priority,
        timeoutMs: row.timeout_ms,
      });
      const updated = await client.query<RunRow>(
        `UPDATE ${store.table} SET job_id = $2 WHERE id = $1 RETURNING *`,
        [id, jobId],
      );
      return { run: recordOf(updated.rows[0]!), created: true };
    });
  }

  /** One run: status, holder, attempts, lineage, current task, tokens so far, output or error. */
  get(runId: string): Promise<RunRecord | undefined> {
    return this.#store.get(runId);
  }

  /**
   * Like {@link get}, and a unique start of a run id finds its run too (as `checkpoint info` takes a
   * checkpoint id's start). A typed `not_found` when no run matches, `ambiguous_reference` listing
   * the candidates when several do.
   */
  async require(runIdOrPrefix: string): Promise<RunRecord> {
    const run = await this.get(runIdOrPrefix);
    if (run) return run;
    const display = this.#store.location.display;
    const pattern = `${runIdOrPrefix.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
    const { rows } =
      runIdOrPrefix === ''
        ? { rows: [] }
        : await this.#store.pool.query<{ id: string }>(
            `SELECT id FROM ${this.#store.table} WHERE id LIKE $1 ORDER BY created_at DESC, id LIMIT 11`,
            [pattern],
          );
    if (rows.length === 1) return (await this.get(rows[0]!.id))!;
    if (rows.length > 1) {
      const shown = rows.slice(0, 10).map((row) => row.id);
      throw workerError(
        'ambiguous_reference',
        `run id ${runIdOrPrefix} is ambiguous in ${display}: it starts ${rows.length > 10 ? 'more than 10 runs' : `${rows.length} runs`} (${shown.join(', ')}); give more of the id`,
      );
    }
    throw workerError(
      'not_found',
      `no run ${runIdOrPrefix} in ${display}; list them with crewline runs list`,
    );
  }

  async list(options: ListRunsOptions = {}): Promise<RunRecord[]> {
    if (options.status !== undefined && !runStatuses.includes(options.status)) {
      throw workerError(
        'invalid_argument',
        `status must be one of ${runStatuses.join(', ')}, got ${JSON.stringify(options.status)}`,
      );
    }
    await this.#store.start();
    const { rows } = await this.#store.pool.query<RunRow>(
      `SELECT * FROM ${this.#store.table} WHERE ($1::text IS NULL OR status = $1) ORDER BY created_at DESC, id LIMIT $2`,
      [options.status ?? null, options.limit ?? 50],
    );
    return rows.map(recordOf);
  }

  /**
   * Continues a paused run (a flow that asked a person, status `paused`) with the answer, from any
   * machine: the run is queued again and the worker that takes it continues the flow from the
   * checkpoint it paused at, its `ask()` returning `humanInput`. A run that is not paused is refused
   * (`invalid_state`). Returns the run, `queued`.
   */
  resume(runId: string, options: ResumeRunOptions): Promise<RunRecord> {
    return resumePausedRun(this.#store, runId, options);
  }

  /**
   * Cancels a run that has not ended: a queued or paused run is never taken; a running one is stopped by its
   * worker within its `pollIntervalMs` (the model call in flight is aborted, the next one is never
   * made). No worker holds it from then on (its row names none); the stopped attempt adds what it did
   * since its last renewal (tokens, task, checkpoint). Returns the run; an ended run is returned
   * unchanged.
   */
  async cancel(runId: string, reason = 'cancelled'): Promise<RunRecord> {
    await this.#store.start();
    const { rows } = await this.#store.pool.query<RunRow>(
      `UPDATE ${this.#store.table}
          SET status = 'cancelled', error = $2, finished_at = now(), updated_at = now(), holder_token = NULL,
              worker = NULL, lease_expires_at = NULL
        WHERE id = $1 AND status IN ('queued', 'running', 'paused') RETURNING *`,
      [runId, reason],
    );
    const row = rows[0];
    if (row === undefined) return this.require(runId);
    if (row.job_id) await this.#store.boss.cancel(RUNS_QUEUE, row.job_id).catch(() => undefined);
    return recordOf(row);
  }

  /**
   * Queues a new run that branches off a finished (completed, failed or cancelled) run's last
   * checkpoint, with inputs and task outputs changed: the tasks after the first edited one run again,
   * earlier ones are not paid for again. A flow run re-runs from a method (`rerunFrom`) with changed
   * inputs. The request is checked against the run's checkpoint before anything is queued: a task
   * number out of range, a task not completed, an unknown input or method is a typed
   * `invalid_argument`, a run that has not finished `invalid_state`. The crew is rebuilt from the
   * checkpoint (its models and tools registered by name, as for `crewline checkpoint fork`); a flow
   * is the one registered under the run's name.
   */
  fork(runId: string, options: ForkRunOptions = {}): Promise<RunRecord> {
    return forkRun(
      this.#store,
      () => {
        this.#provider ??= new PostgresProvider({ schema: this.#store.location.schema, poolSize: 1 });
        return this.#provider;
      },
      runId,
      options,
    );
  }

  /**
   * Resolves when every run named has ended (completed, failed or cancelled), polling every
   * `intervalMs`. With `timeoutMs`, a poll that loses its connection (a restart or failover of
   * Postgres, a reset socket) or cannot reach the server for now (refused, unreachable, a DNS lookup
   * failing, also before the queue was first opened), and a server or role at its connection limit
   * (53300) or a host name not found (ENOTFOUND), is tried again at the next interval until
   * `timeoutMs`. Without `timeoutMs`, only a wait whose queue has reached its server (a connection of
   * it opened, in this wait or before it: an enqueue, a `get`) polls again when its connection is lost
   * or its server cannot be reached, its first poll included, and only for 30 s (`OUTAGE_LIMIT_MS`) of
   * consecutive failed polls: then it rejects with the last error, so it never hangs; a server never
   * reached (refused, an unknown host) and a connection limit reject at once. Any
   * other error is thrown, among them the refusals a fresh connection meets again (a changed password,
   * a dropped database).
   */
  async waitForEnd(
    runIds: readonly string[],
    options: { intervalMs?: number; timeoutMs?: number } = {},
  ): Promise<RunRecord[]> {
    const deadline = Date.now() + (options.timeoutMs ?? Number.POSITIVE_INFINITY);
    const pause = () => new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
    // Without a deadline, what bounds the polls again: whether the queue ever reached its server (by
    // this wait or before it: the first poll of a wait after an enqueue may meet a restart too), and
    // since when polls have failed in a row.
    let failingSince: number | undefined;
    for (;;) {
      let rows: RunRow[];
      try {
        await this.#store.start();
        ({ rows } = await this.#store.pool.query<RunRow>(
          `SELECT * FROM ${this.#store.table} WHERE id = ANY($1)`,
          [runIds],
        ));
      } catch (error) {
        failingSince ??= Date.now();
        if (!pollsAgain(error, options.timeoutMs !== undefined, this.#store.reachedServer, failingSince))
          throw error;
        if (Date.now() > deadline) throw error;
        await pause();
        continue;
      }
      failingSince = undefined;
      const records = rows.map(recordOf);
      if (
        records.length === runIds.length &&
        records.every((run) => ['completed', 'failed', 'cancelled'].includes(run.status))
      ) {
        return runIds.map((id) => records.find((run) => run.id === id)!);
      }
      if (Date.now() > deadline) {
        throw workerError(
          'aborted',
          `runs did not end within ${options.timeoutMs} ms: ${records
            .filter((run) => !['completed', 'failed', 'cancelled'].includes(run.status))
            .map((run) => `${run.id} ${run.status}`)
            .join(', ')}`,
        );
      }
      await pause();
    }
  }

  /**
   * How far a run got, from its checkpoints (status, current task, model calls, their tokens and
   * cost so far): exact for every completion a checkpoint holds, even when a worker was killed before its
   * next renewal, and readable from any process.
   */
  async progress(runId: string): Promise<RunProgress> {
    const run = await this.require(runId);
    this.#provider ??= new PostgresProvider({ schema: this.#store.location.schema, poolSize: 1 });
    return readRunProgress(this.#provider, this.#store.location.checkpointLocation, run, this.#modelPrices);
  }

  /** Where the queue is, without a password. */
  get location(): string {
    return this.#store.location.display;
  }

  async close(): Promise<void> {
    try {
      await this.#store.close();
    } finally {
      // The checkpoint reader's pool is closed even when the queue's was not: it would keep the process alive.
      const provider = this.#provider;
      this.#provider = undefined;
      await provider?.close();
    }
  }
}

/**
 * How long a wait without `timeoutMs` whose queue has reached its server keeps polling while every poll fails
 * (its connection lost, the server refusing or unreachable): 30 s covers a restart of Postgres and a
 * quick failover, yet a server that stays down makes the wait reject within half a minute rather than
 * hang. A longer outage is waited out by passing `timeoutMs`.
 */
const OUTAGE_LIMIT_MS = 30_000;

/**
 * Whether a poll of {@link RunQueue.waitForEnd} that threw `error` is tried again. With a deadline,
 * a lost or unreachable connection and a refusal that may pass (53300, ENOTFOUND) are, until the
 * deadline (looked for under the queue's own "cannot reach" error too). Without one, only a lost or
 * unreachable connection of a queue that has reached its server (`reached`, see
 * QueueStore.reachedServer), for {@link OUTAGE_LIMIT_MS}: a server never reached may be a wrong
 * address, which is said at once rather than after half a minute of polls.
 */
function pollsAgain(error: unknown, hasDeadline: boolean, reached: boolean, failingSince: number): boolean {
  if (hasDeadline) return connectionLostWithin(error) || refusalMayPass(error);
  return reached && connectionLostWithin(error) && Date.now() - failingSince < OUTAGE_LIMIT_MS;
}
