import { randomUUID } from 'node:crypto';
import type { CheckpointProvider } from '@crewline/runtime-state';
import type pg from 'pg';
import { z } from 'zod';
import { workerError } from './errors.js';
import { findForkPoint } from './fork-point.js';
import type { QueueStore } from './queue-store.js';
import { parseOptions, runLimitsSchema } from './run-options.js';
import { type RunRecord, type RunRow, recordOf } from './run-record.js';

export interface ForkRunOptions {
  /**
   * Inputs changed for the fork, over the forked run's (the fork's row holds them all): they
   * re-template the tasks that run again (a crew) or go into the state (a flow, which is given only
   * those that differ from the forked run's: the others stay as its completed methods left them). Each
   * must be one the run knows — a kickoff input, a `{placeholder}` of its templates or a key of a
   * flow's state — or the fork is refused. A flow's `id` cannot change: its fork runs under a new
   * state id (the fork's run fails with `invalid_argument`). Default: none.
   */
  inputs?: Record<string, unknown>;
  /**
   * Crews: flat task index (from 0, in the order of the crew's tasks; the CLI's task N is index N-1)
   * → the output the fork starts with instead of the one the run produced; every later task runs
   * again. Each must name a task completed at the run's last checkpoint, or the fork is refused.
   * Refused for flows (use `rerunFrom`). Default: none.
   */
  taskOutputs?: Record<number, string>;
  /**
   * Flows: the method to run again, with every method after it; the fork branches off the run's
   * checkpoint saved before that method first completed, so earlier methods are restored, not run
   * (nor paid) again. Must be a method the run completed. Refused for crews. Default: none (the
   * fork continues the run's last checkpoint: a completed flow takes the inputs into its state and
   * runs nothing again).
   */
  rerunFrom?: string;
  /** The same key forked again returns the run it made the first time. Default: none. */
  idempotencyKey?: string;
  /** Higher runs are taken first. Default: the forked run's. */
  priority?: number;
  /** An attempt running longer is stopped and the run fails. Default: the forked run's. */
  timeoutMs?: number;
  /** Failed attempts before the run fails. Default: the forked run's. */
  maxAttempts?: number;
}

const forkSchema = runLimitsSchema.extend({
  inputs: z.record(z.string(), z.unknown()).optional(),
  taskOutputs: z.record(z.string().regex(/^\d+$/, 'keys must be task indexes from 0'), z.string()).optional(),
  rerunFrom: z.string().min(1, 'must name a method').optional(),
});

const finished = ['completed', 'failed', 'cancelled'];

/**
 * Queues a new run that branches off a finished run's last checkpoint (or, for a flow with
 * `rerunFrom`, an earlier one of its lineage): it runs under a lineage of its own whose first
 * checkpoint names that one as parent, with the inputs and task outputs changed as asked; the tasks
 * after the first edit run again, the ones before are not paid for again. The request is checked
 * against the checkpoint (read through `provider`) before anything is queued. A failed or cancelled
 * run is forked like a completed one: its last checkpoint is where it stopped. Its row names the run
 * it forks (`forkOf`) and the checkpoint (`forkFrom`).
 */
export async function forkRun(
  store: QueueStore,
  provider: () => CheckpointProvider,
  runId: string,
  options: ForkRunOptions,
): Promise<RunRecord> {
  parseOptions(forkSchema, options, `fork("${runId}")`);
  await store.start();
  return store.transaction(async (client) => {
    // A key used before returns its run as it is, without checking the request again: the forked run
    // may have changed since (pruned, another lineage), and the fork it asked for exists already.
    if (options.idempotencyKey !== undefined) {
      const existing = await existingFork(client, store, runId, options.idempotencyKey);
      if (existing !== undefined) return existing;
    }
    const { rows } = await client.query<RunRow>(`SELECT * FROM ${store.table} WHERE id = $1 FOR SHARE`, [
      runId,
    ]);
    const source = rows[0];
    if (source === undefined) {
      throw workerError(
        'not_found',
        `fork: no run ${runId} in ${store.location.display}; list them with crewline runs list`,
      );
    }
    if (!finished.includes(source.status)) {
      // A run that goes on has no last checkpoint yet: a fork of it would miss what it still does.
      throw workerError(
        'invalid_state',
        `fork: run ${runId} is ${source.status}; only a finished run (completed, failed or cancelled) is forked — ${
          source.status === 'paused'
            ? 'answer it with crewline runs resume --answer (queue.resume) or cancel it first'
            : 'wait for it (queue.waitForEnd) or cancel it first'
        }`,
      );
    }
    if (source.last_checkpoint === null) {
      throw workerError(
        'invalid_state',
        `fork: run ${runId} ended (${source.status}) without writing a checkpoint; there is nothing to branch off, enqueue it again instead`,
      );
    }
    const forkFrom = await findForkPoint(
      provider(),
      store.location.checkpointLocation,
      { runId, lastCheckpoint: source.last_checkpoint, lineageId: source.lineage_id },
      options,
    );
    const inputs = { ...source.inputs, ...(options.inputs ?? {}) };
    let inputsText: string;
    try {
      inputsText = JSON.stringify(inputs);
    } catch (error) {
      throw workerError('invalid_argument', `fork("${runId}"): inputs must be JSON (plain values)`, {
        cause: error,
      });
    }
    const id = randomUUID();
    const inserted = await client.query<RunRow>(
      `INSERT INTO ${store.table} (id, name, inputs, idempotency_key, priority, timeout_ms, max_attempts, status,
                                   fork_of, fork_from, task_outputs, rerun_from)
       VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, 'queued', $8, $9, $10::jsonb, $11)
       ON CONFLICT (idempotency_key) DO NOTHING RETURNING *`,
      [
        id,
        source.name,
        inputsText,
        options.idempotencyKey ?? null,
        options.priority ?? source.priority,
        options.timeoutMs ?? source.timeout_ms,
        options.maxAttempts ?? source.max_attempts,
        source.id,
        forkFrom,
        JSON.stringify(options.taskOutputs ?? {}),
        options.rerunFrom ?? null,
      ],
    );
    const row = inserted.rows[0];
    if (row === undefined) {
      const existing = await existingFork(client, store, runId, options.idempotencyKey!);
      if (existing === undefined)
        throw workerError('conflict', `fork("${runId}"): idempotency key race; try again`);
      return existing;
    }
    const jobId = await store.sendAttempt(client, { id, priority: row.priority, timeoutMs: row.timeout_ms });
    const updated = await client.query<RunRow>(
      `UPDATE ${store.table} SET job_id = $2 WHERE id = $1 RETURNING *`,
      [id, jobId],
    );
    return recordOf(updated.rows[0]!);
  });
}

/**
 * The run an idempotency key made before, if any (after an INSERT's ON CONFLICT, which waited for its
 * transaction, it is visible); refused when it is not a fork of `runId`.
 */
async function existingFork(
  client: pg.PoolClient,
  store: QueueStore,
  runId: string,
  key: string,
): Promise<RunRecord | undefined> {
  const { rows } = await client.query<RunRow>(`SELECT * FROM ${store.table} WHERE idempotency_key = $1`, [
    key,
  ]);
  const found = rows[0];
  if (found === undefined) return undefined;
  if (found.fork_of !== runId)
    throw workerError('conflict', `fork("${runId}"): ${keyTakenBy(found, runId, key)}`);
  return recordOf(found);
}

/** What the run `found` that a fork's idempotency `key` already names is, said to the fork of `runId`. */
function keyTakenBy(found: RunRow, runId: string, key: string): string {
  const quoted = JSON.stringify(key);
  if (found.id === runId)
    return `idempotency key ${quoted} is the key run ${runId} itself was enqueued with; give the fork a key of its own`;
  if (found.fork_of === null)
    return `idempotency key ${quoted} was used to enqueue run ${found.id} ("${found.name}"), not for a fork; use another key`;
  return `idempotency key ${quoted} was used for run ${found.id}, a fork of run ${found.fork_of}, not of ${runId}; use another key`;
}
