import type pg from 'pg';
import { z } from 'zod';
import { type AttemptTokens, addedTokens } from './attempt-end.js';
import { workerError } from './errors.js';
import type { QueueStore } from './queue-store.js';
import type { AttemptPause } from './run-attempt.js';
import { parseOptions } from './run-options.js';
import { type RunRecord, type RunRow, recordOf } from './run-record.js';

/**
 * Runs paused for a person: a flow's `ask()` in a worker ends the attempt with the run `paused`
 * (its question on the row, no hold, no worker slot, no job), and `resumePausedRun` — from any
 * machine — stores the answer and queues the run again; the worker that takes it continues the
 * pause's checkpoint with that answer.
 */

/** What the worker knows of the attempt that paused (the fields of its end it writes). */
export interface PausingAttempt extends AttemptTokens {
  row: Pick<RunRow, 'id'>;
  lastCheckpoint: string | null;
  currentTask: string | null;
}

/**
 * Ends an attempt whose flow paused: the run becomes `paused` with the question, its hold given up
 * (only while this attempt still holds it; `lost` otherwise, e.g. cancelled meanwhile).
 */
export async function pauseAttempt(
  store: QueueStore,
  attempt: PausingAttempt,
  pause: AttemptPause,
): Promise<'paused' | 'lost'> {
  const { rowCount } = await store.pool.query(
    `UPDATE ${store.table}
        SET ${addedTokens(attempt, '$2')},
            last_checkpoint = coalesce($5, last_checkpoint), current_task = coalesce($6, current_task),
            holder_token = NULL, lease_expires_at = NULL, worker = NULL, job_id = NULL, updated_at = now(),
            status = 'paused', question = $7, question_method = $8, question_kind = $9,
            human_input = NULL, pause_checkpoint = $10
      WHERE id = $1 AND holder_token = $2 AND status = 'running'`,
    [
      attempt.row.id,
      attempt.holderToken,
      attempt.inputTokens,
      attempt.outputTokens,
      pause.checkpoint ?? attempt.lastCheckpoint,
      attempt.currentTask,
      pause.message,
      pause.methodName,
      pause.kind,
      pause.checkpoint ?? attempt.lastCheckpoint,
    ],
  );
  return rowCount === 1 ? 'paused' : 'lost';
}

const resumeSchema = z.strictObject({
  humanInput: z.string({ error: 'must be a string (the answer to the question)' }),
});

/** Options of `queue.resume(runId, options)`. */
export interface ResumeRunOptions {
  /** The answer to the question the paused flow asked (`crewline runs show` prints it). Required. */
  humanInput: string;
}

/**
 * Stores the answer of a paused run and queues it again (a new job, in the same transaction). A run
 * that is not paused is refused with `invalid_state`, so an answer never reaches another question.
 */
export async function resumePausedRun(
  store: QueueStore,
  runId: string,
  options: ResumeRunOptions,
): Promise<RunRecord> {
  const parsed = parseOptions(resumeSchema, options, `resume("${runId}")`);
  await store.start();
  return store.transaction(async (client: pg.PoolClient) => {
    const { rows } = await client.query<RunRow>(`SELECT * FROM ${store.table} WHERE id = $1 FOR UPDATE`, [
      runId,
    ]);
    const row = rows[0];
    if (row === undefined) {
      throw workerError(
        'not_found',
        `resume: no run ${runId} in ${store.location.display}; list the paused ones with crewline runs list --status paused`,
      );
    }
    if (row.status !== 'paused') {
      throw workerError(
        'invalid_state',
        `resume: run ${runId} is ${row.status}, not paused, so it waits for no answer; only a run whose flow asked a person (status paused, crewline runs show ${runId}) can be resumed`,
      );
    }
    const jobId = await store.sendAttempt(client, {
      id: row.id,
      priority: row.priority,
      timeoutMs: row.timeout_ms,
    });
    const updated = await client.query<RunRow>(
      `UPDATE ${store.table} SET status = 'queued', human_input = $2, job_id = $3, updated_at = now()
        WHERE id = $1 RETURNING *`,
      [runId, parsed.humanInput, jobId],
    );
    return recordOf(updated.rows[0]!);
  });
}

/**
 * The answer this attempt gives the flow: the run's stored answer, but only when the attempt
 * continues the very checkpoint the flow paused at. Once a later checkpoint exists the answer is in
 * it already (a worker died after delivering it), and a later pause is another question.
 */
export function answerToDeliver(row: RunRow, restoreFrom: string | undefined): string | undefined {
  if (row.human_input === null || row.pause_checkpoint === null || restoreFrom === undefined)
    return undefined;
  return checkpointIdOf(restoreFrom) === checkpointIdOf(row.pause_checkpoint) ? row.human_input : undefined;
}

/** The id in a checkpoint reference (`postgres-url#id`). */
function checkpointIdOf(reference: string): string {
  return reference.slice(reference.lastIndexOf('#') + 1);
}
