import { logger } from '@crewline/events';
import { component } from './errors.js';
import type { QueueStore } from './queue-store.js';
import type { RunRow } from './run-record.js';

/** Who claims: the worker as rows name it, the names it registers, and how long its hold lasts. */
export interface RunClaimOptions {
  /** The worker, as the run's row names it (`worker <id> on <host>, pid N`). */
  worker: string;
  /** The names the worker registers now (a registry may grow): it claims no run of another name. */
  registered: () => readonly string[];
  /** How long the hold lasts from the claim without a renewal. */
  leaseTtlMs: number;
}

/** What every claim sets: the hold ($1 token, $2 worker, $3 lease), the attempt, and no pass-over. */
const claimSet = `status = 'running', attempts = attempts + 1, holder_token = $1, worker = $2,
  lease_expires_at = now() + $3 * interval '1 millisecond',
  started_at = coalesce(started_at, now()), updated_at = now(), passed_over = NULL`;

/**
 * The two ways a worker takes a queued run. Each is one statement that matches only a queued run of
 * a name the worker registers and makes it `running` under a new hold, so of two workers claiming one
 * run the second finds it running and gets nothing: a run has one holder at a time.
 */
export class RunClaims {
  readonly #store: QueueStore;
  readonly #options: RunClaimOptions;

  constructor(store: QueueStore, options: RunClaimOptions) {
    this.#store = store;
    this.#options = options;
  }

  /**
   * Claims run `runId` delivered by pg-boss job `jobId`, when the row still names that job (any other
   * delivery is stale: the run was cancelled, re-sent, or taken by name meanwhile).
   */
  async byJob(runId: string, jobId: string, token: string): Promise<RunRow | undefined> {
    const { rows } = await this.#store.pool.query<RunRow>(
      `UPDATE ${this.#store.table} SET ${claimSet}
        WHERE id = $5 AND job_id = $6 AND status = 'queued' AND name = ANY($4::text[]) RETURNING *`,
      [...this.#holdValues(token), runId, jobId],
    );
    return rows[0];
  }

  /**
   * Claims the first passed-over run (highest priority, then oldest) of a name this worker registers:
   * a run that a worker without its name handed back (see unregistered-runs.ts). Such a run waits
   * for its delayed job, and pg-boss gives a job to whichever worker fetches first, so a worker
   * without the name that polls more often would win its every window; taken here by name, the run
   * waits at most one poll of a worker that registers it (less when the hand-back's notice wakes it).
   * The row names no job while it runs, so its delayed job, if delivered, is a stale delivery; it is
   * withdrawn after the claim all the same, without waiting for it (best-effort: one statement in the
   * common case where no run is passed over, and a worker killed in between leaves only that stale
   * delivery).
   * Runs passed over by an earlier version of this package (a `passed_over` row and a delayed job,
   * the same layout) are taken the same way.
   */
  async passedOver(token: string): Promise<RunRow | undefined> {
    const { rows } = await this.#store.pool.query<RunRow & { withdrawn_job_id: string | null }>(
      `WITH passed AS (
         SELECT id, job_id FROM ${this.#store.table}
          WHERE status = 'queued' AND passed_over IS NOT NULL AND name = ANY($4::text[])
          ORDER BY priority DESC, created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
       UPDATE ${this.#store.table} AS runs SET ${claimSet}, job_id = NULL FROM passed
        WHERE runs.id = passed.id AND runs.status = 'queued'
        RETURNING runs.*, passed.job_id AS withdrawn_job_id`,
      this.#holdValues(token),
    );
    const claimed = rows[0];
    if (claimed === undefined) return undefined;
    const { withdrawn_job_id: withdrawnJobId, ...row } = claimed;
    // Not awaited: the run starts (and its hold is renewed) now, not after a round trip that a hung
    // connection could stretch past the lease, when another worker's reaper would take the run while
    // this one runs it too. The row names no job now, so a delivery of this one claims nothing.
    if (withdrawnJobId !== null) {
      this.#store.withdrawAttempt(withdrawnJobId).catch((error: unknown) => {
        logger.warn(
          component,
          `run ${row.id}: withdrawing its delayed job ${withdrawnJobId} failed (its delivery is stale and claims nothing)`,
          error,
        );
      });
    }
    return row;
  }

  #holdValues(token: string): unknown[] {
    const { worker, leaseTtlMs, registered } = this.#options;
    return [token, worker, leaseTtlMs, registered()];
  }
}
