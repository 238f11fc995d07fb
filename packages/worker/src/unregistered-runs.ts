import { logger } from '@crewline/events';
import { component } from './errors.js';
import type { QueueStore } from './queue-store.js';

/** The longest a passed-over run waits before workers see it again (10 s). */
const MAX_PASS_OVER_DELAY_MS = 10_000;

/** What a worker needs to hand back the runs of names it does not register. */
export interface UnregisteredRunsOptions {
  /** The worker, as the run's row names it (`worker <id> on <host>, pid N`). */
  worker: string;
  /** The names the worker registers. */
  registered: readonly string[];
  /** The first delay before a passed-over run can be taken again; doubles with each pass, at most 10 s. */
  baseDelayMs: number;
}

/**
 * The runs a worker does not register a crew or flow for. Workers of one queue may register different
 * names (a rolling deploy that adds a crew, or workers dedicated to some crews), and pg-boss delivers
 * any run's job to any worker: a worker that fails such a run would fail it for good although another
 * worker knows it. So the worker hands it back untouched — no attempt, no failure counted — and
 * records on the row who passed it over, which `crewline runs show` and `runs list` print ("waiting
 * for a worker that registers …"). The workers that register the name take such a row by name
 * (`RunClaims.passedOver`), woken by the hand-back's notice or at their next poll; the new job,
 * delayed, is only for workers of an earlier version of this package, which take runs by job alone.
 */
export class UnregisteredRuns {
  readonly #store: QueueStore;
  readonly #options: UnregisteredRunsOptions;
  readonly #warned = new Set<string>();

  constructor(store: QueueStore, options: UnregisteredRunsOptions) {
    this.#store = store;
    this.#options = options;
  }

  /**
   * Hands run `runId`, delivered by job `jobId`, back to the queue when it is still queued under
   * that job and its name is not one this worker registers; returns its name then, else `undefined`
   * (a stale delivery: a cancelled run, or one re-sent under another job). The caller completes the job.
   */
  async handBack(runId: string, jobId: string): Promise<string | undefined> {
    const { registered, worker } = this.#options;
    const name = await this.#store.transaction(async (client) => {
      const { rows } = await client.query<{
        name: string;
        priority: number;
        timeout_ms: number | null;
        times: number | null;
      }>(
        `SELECT name, priority, timeout_ms, (passed_over->>'times')::integer AS times FROM ${this.#store.table}
          WHERE id = $1 AND job_id = $2 AND status = 'queued' AND NOT (name = ANY($3::text[]))
          FOR UPDATE`,
        [runId, jobId, registered],
      );
      const row = rows[0];
      if (row === undefined) return undefined;
      const times = (row.times ?? 0) + 1;
      // Doubling, so a run no worker of the queue registers costs a statement every 10 s, not a loop
      // (a worker that registers the name does not wait for this delay: it takes the run by name).
      const delayMs = Math.min(MAX_PASS_OVER_DELAY_MS, this.#options.baseDelayMs * 2 ** (times - 1));
      const nextJob = await this.#store.sendAttempt(
        client,
        { id: runId, priority: row.priority, timeoutMs: row.timeout_ms },
        delayMs,
      );
      await client.query(
        `UPDATE ${this.#store.table}
            SET job_id = $2, updated_at = now(),
                passed_over = jsonb_build_object('worker', $3::text, 'registered', $4::jsonb, 'at', now(), 'times', $5::integer)
          WHERE id = $1`,
        [runId, nextJob, worker, JSON.stringify(registered), times],
      );
      // An idle worker that registers the name takes the run now rather than at its next poll.
      await this.#store.announce(client, `passed-over ${runId}`);
      return row.name;
    });
    if (name !== undefined && !this.#warned.has(name)) {
      this.#warned.add(name);
      logger.warn(
        component,
        `run ${runId}: no crew or flow is registered as "${name}" in this worker (registered: ${registered.join(', ') || 'none'}); handed back untouched for a worker that registers it (warned once per name). Register it in crewline.config.ts (runs) if this worker should run it`,
      );
    }
    return name;
  }
}
