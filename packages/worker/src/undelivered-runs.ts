import { logger } from '@crewline/events';
import { component } from './errors.js';
import { type QueueStore, RUNS_QUEUE } from './queue-store.js';

/** How many undelivered runs one sweep re-sends at most (the next sweep takes the rest). */
const SWEEP_LIMIT = 20;

/**
 * The sweep's read ($1 the queue's name, $2 the claim grace in ms). The join compares pg-boss's uuid
 * with the row's job id cast to uuid, so each queued row probes the job table's key; casting the
 * job's id to text instead read the whole table (every job pg-boss keeps) at every sweep. A job id
 * that is not a uuid (nothing crewline writes) would make the cast throw: it matches no job, so the
 * run counts as undelivered and is sent again.
 */
export function undeliveredRunsStatement(runsTable: string, queueSchema: string): string {
  return `SELECT runs.id, runs.job_id FROM ${runsTable} AS runs
       LEFT JOIN "${queueSchema}".job AS job ON job.name = $1
             AND job.id = CASE WHEN runs.job_id ~* '${uuidPattern}' THEN runs.job_id::uuid END
      WHERE runs.status = 'queued'
        AND (job.id IS NULL
             OR (job.state NOT IN ('created', 'retry')
                 AND (job.state <> 'active' OR job.started_on < now() - $2 * interval '1 millisecond')))
      ORDER BY runs.priority DESC, runs.created_at LIMIT ${SWEEP_LIMIT}`;
}

/** A uuid as Postgres prints it (pg-boss's job ids). */
const uuidPattern = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

/** When a queued run counts as undelivered. */
export interface UndeliveredRunsOptions {
  /**
   * How long a job may stay fetched (`active` in pg-boss) without its run being claimed before the
   * run counts as undelivered: a live worker claims within one statement of its fetch, so this only
   * spares a claim in flight a pointless re-send (which would make it a stale delivery, never a
   * second holder).
   */
  claimGraceMs: number;
}

/**
 * Queued runs that no job will deliver any more. The row is the source of truth and its job only the
 * delivery, but a delivery can be lost: a worker killed (SIGKILL, OOM, its connection gone) between
 * pg-boss's fetch and its claim of the row leaves the job `active` — later `failed` by pg-boss's
 * expiry, as `retryLimit` is 0 — and the row `queued` under it, which no worker would ever fetch
 * again. A job archived or deleted by pg-boss's retention while still waiting has the same effect.
 * The sweep gives each such row a new job, as a hand-back would: no attempt and no failure counted.
 * It never claims: the claim (`RunClaims`) stays the one fence, matching the row's current job
 * only, so a worker still holding the old delivery finds it stale.
 */
export class UndeliveredRuns {
  readonly #store: QueueStore;
  readonly #options: UndeliveredRunsOptions;

  constructor(store: QueueStore, options: UndeliveredRunsOptions) {
    this.#store = store;
    this.#options = options;
  }

  /**
   * Re-sends the queued runs whose job is no longer waiting (`created` or `retry`) nor fetched within
   * the grace; returns their ids. One read of the queued rows, each looking its job up by pg-boss's
   * key: its cost grows with the queued runs, not with the jobs pg-boss keeps (completed ones stay
   * for hours), nor with the runs it finds.
   */
  async resend(): Promise<string[]> {
    const { rows } = await this.#store.pool.query<{ id: string; job_id: string | null }>(
      undeliveredRunsStatement(this.#store.table, this.#store.location.queueSchema),
      [RUNS_QUEUE, this.#options.claimGraceMs],
    );
    const resent: string[] = [];
    for (const row of rows) {
      if (await this.#resendOne(row.id, row.job_id)) resent.push(row.id);
    }
    return resent;
  }

  /** Gives run `runId` a new job when it is still queued under `lostJobId`. */
  async #resendOne(runId: string, lostJobId: string | null): Promise<boolean> {
    const resent = await this.#store.transaction(async (client) => {
      // Locked and checked again: a claim, a cancel or another worker's sweep may have come first.
      const { rows } = await client.query<{ priority: number; timeout_ms: number | null }>(
        `SELECT priority, timeout_ms FROM ${this.#store.table}
          WHERE id = $1 AND status = 'queued' AND job_id IS NOT DISTINCT FROM $2 FOR UPDATE`,
        [runId, lostJobId],
      );
      const row = rows[0];
      if (row === undefined) return false;
      const jobId = await this.#store.sendAttempt(client, {
        id: runId,
        priority: row.priority,
        timeoutMs: row.timeout_ms,
      });
      await client.query(`UPDATE ${this.#store.table} SET job_id = $2, updated_at = now() WHERE id = $1`, [
        runId,
        jobId,
      ]);
      return true;
    });
    if (!resent) return false;
    logger.warn(
      component,
      `run ${runId} was queued under job ${lostJobId ?? '(none)'}, which no worker will deliver any more (a worker died between fetching it and claiming the run); sent it again under a new job`,
    );
    // The old job may still be `active`: cancelled so that its expiry does not count it as failed.
    if (lostJobId !== null) await this.#store.withdrawAttempt(lostJobId).catch(() => undefined);
    return true;
  }
}
