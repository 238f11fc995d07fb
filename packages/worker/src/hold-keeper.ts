import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { logger } from '@crewline/events';
import { leaseSafetyMarginMs, localLeaseDeadline } from '@crewline/runtime-state/internal';
import type pg from 'pg';
import type { AttemptEnds, TokenCount } from './attempt-end.js';
import { component, workerError } from './errors.js';
import type { QueueStore } from './queue-store.js';
import type { AttemptTracker } from './run-attempt.js';
import type { RunRow } from './run-record.js';

type RenewalOutcome = 'renewed' | 'ended' | 'failed';

/** A run this worker is executing, under the hold `token`. */
export interface HeldRun {
  runId: string;
  token: string;
  tracker: AttemptTracker;
  /**
   * `performance.now()` when the claim or the latest renewal the server confirmed was sent: the
   * server holds the run for this worker until at least `leaseTtlMs` after it.
   */
  confirmedAt: number;
  /**
   * The running total of this attempt's tokens its renewals carried: each renewal sends the whole
   * total, and the row adds only what it has not counted of this hold yet (it remembers that per
   * hold), so a renewal that timed out on the client yet applied on the server once a lock was
   * released counts nothing twice, in whatever order renewals apply.
   */
  renewedTokens: TokenCount;
  /** The highest total a renewal the server confirmed carried. */
  confirmedTokens: TokenCount;
}

/** What the row counted of this hold's renewals (`$2` the hold's token): none before its first. */
function counted(kind: 'input' | 'output'): string {
  return `CASE WHEN renewal_holder = $2 THEN renewal_${kind}_tokens ELSE 0 END`;
}

/**
 * How long a renewal may wait for the server before its connection is closed: a quarter of the lease,
 * under the renewal interval (a third), so the next renewal runs on a fresh connection; at least a
 * second, so a busy server does not turn a short lease's renewals into errors (the deadline below
 * stops the run when renewals stay unconfirmed, however long each one waits).
 */
function renewalTimeoutMs(leaseTtlMs: number): number {
  return Math.max(1_000, Math.floor(leaseTtlMs / 4));
}

/**
 * Keeps this worker's holds: renews them (writing each run's progress), stops a run whose hold was
 * cancelled or taken over, and retries the runs of workers that stopped renewing theirs.
 */
export class HoldKeeper {
  readonly #store: QueueStore;
  readonly #ends: AttemptEnds;
  readonly #leaseTtlMs: number;
  readonly #held: ReadonlyMap<string, HeldRun>;
  /** Runs whose renewal failed, with the timer that stops them unless a renewal is confirmed first. */
  readonly #deadlines = new Map<HeldRun, NodeJS.Timeout>();
  /** The renewal in flight of each run, if any (one at a time: a second would queue behind it). */
  readonly #renewals = new Map<HeldRun, Promise<RenewalOutcome>>();

  constructor(store: QueueStore, ends: AttemptEnds, leaseTtlMs: number, held: ReadonlyMap<string, HeldRun>) {
    this.#store = store;
    this.#ends = ends;
    this.#leaseTtlMs = leaseTtlMs;
    this.#held = held;
  }

  /**
   * Renews the hold on every running run and writes their progress; stops the ones cancelled or lost.
   * A run whose renewals keep failing (the server unreachable, a hung connection) is stopped as lost
   * once its hold could have run out on the server: another worker's reaper may give the run to
   * someone else then, and this worker must not go on paying for its model calls.
   */
  async renewAll(): Promise<void> {
    await Promise.all([...this.#held.values()].map((held) => this.#renew(held)));
  }

  /**
   * Renews one hold (writing the run's progress): `renewed`, `ended` (cancelled or taken over: the
   * run is stopped) or `failed` (the server did not confirm it; retried at the next renewal).
   */
  #renew(held: HeldRun): Promise<RenewalOutcome> {
    const inFlight = this.#renewals.get(held);
    if (inFlight !== undefined) return inFlight;
    // Armed before the renewal is sent, not when it fails: one that waits for a connection from a
    // pool of hung ones may neither fail nor succeed in time.
    this.#armDeadline(held);
    const renewal = this.#sendRenewal(held).finally(() => this.#renewals.delete(held));
    this.#renewals.set(held, renewal);
    return renewal;
  }

  async #sendRenewal(held: HeldRun): Promise<RenewalOutcome> {
    const { tracker } = held;
    const taken = tracker.takeTokens();
    held.renewedTokens.input += taken.input;
    held.renewedTokens.output += taken.output;
    const total = { ...held.renewedTokens };
    const sentAt = performance.now();
    try {
      // The row adds what it has not counted of this hold's total: a renewal applied late (after one
      // sent later) or again adds nothing. SET sees the row as it was, so the clauses read the old counts.
      const { rows } = await this.#store.pool.query<{ status: string }>(
        this.#timed(
          `UPDATE ${this.#store.table}
              SET lease_expires_at = now() + $3 * interval '1 millisecond',
                  input_tokens = input_tokens + greatest($4 - ${counted('input')}, 0),
                  output_tokens = output_tokens + greatest($5 - ${counted('output')}, 0),
                  renewal_input_tokens = greatest(${counted('input')}, $4),
                  renewal_output_tokens = greatest(${counted('output')}, $5),
                  renewal_holder = $2, current_task = coalesce($6, current_task),
                  last_checkpoint = coalesce($7, last_checkpoint), updated_at = now()
            WHERE id = $1 AND holder_token = $2 AND status = 'running' RETURNING status`,
          [
            held.runId,
            held.token,
            this.#leaseTtlMs,
            total.input,
            total.output,
            tracker.progress.currentTask ?? null,
            tracker.progress.lastCheckpoint ?? null,
          ],
        ),
      );
      if (rows.length === 0) {
        // Paid for all the same: the attempt's end adds what the row did not count of the total (see
        // AttemptEnds.recordUnheld), or a run cancelled as it completed would show none of them.
        const now = await this.#store.get(held.runId);
        tracker.stop(now?.status === 'cancelled' ? 'cancelled' : 'lost');
        return 'ended';
      }
      held.confirmedAt = Math.max(held.confirmedAt, sentAt);
      held.confirmedTokens = {
        input: Math.max(held.confirmedTokens.input, total.input),
        output: Math.max(held.confirmedTokens.output, total.output),
      };
      this.#clearDeadline(held);
      return 'renewed';
    } catch (error) {
      // The next renewal's total carries these tokens too, and the row counts them once whether this
      // one applied or not; the lineage lease still fences what the run writes.
      logger.warn(component, `renewing the hold on run ${held.runId} failed`, error);
      return 'failed';
    }
  }

  /**
   * Stops `held` when its hold could have run out on the server, unless a renewal is confirmed first
   * (which clears the timer; the next renewal arms it again from the new confirmation). At the
   * deadline the renewal in flight, or a new one, gets half the safety margin to answer: a worker whose
   * thread was blocked past the deadline (a synchronous tool) still holds the run when no reaper gave
   * it away meanwhile (the renewal matches its own token only), and keeps it.
   */
  #armDeadline(held: HeldRun): void {
    if (this.#deadlines.has(held)) return;
    const deadline = localLeaseDeadline(held.confirmedAt, this.#leaseTtlMs);
    const timer = setTimeout(
      () => {
        this.#deadlines.delete(held);
        if (this.#held.get(held.runId) !== held) return;
        const lastChance = this.#renewals.get(held) ?? this.#sendRenewal(held);
        // Half the margin: the answer must come before the hold could run out on the server.
        const wait = Math.floor(leaseSafetyMarginMs(this.#leaseTtlMs) / 2);
        void Promise.race([lastChance, sleep(wait, 'failed' as const)]).then((outcome) => {
          if (outcome !== 'failed' || this.#held.get(held.runId) !== held) return;
          logger.warn(
            component,
            `the hold on run ${held.runId} could not be renewed in time (lease ${this.#leaseTtlMs} ms): ` +
              'another worker may take the run over now, so this one stops it; check that the worker reaches Postgres',
          );
          held.tracker.stop('lost');
        });
      },
      Math.max(0, deadline - performance.now()),
    );
    timer.unref();
    this.#deadlines.set(held, timer);
  }

  #clearDeadline(held: HeldRun): void {
    clearTimeout(this.#deadlines.get(held));
    this.#deadlines.delete(held);
  }

  /** A query node-postgres gives up on (closing its connection) after the renewal timeout. */
  #timed(text: string, values: unknown[]): pg.QueryConfig {
    const query: pg.QueryConfig & { query_timeout: number } = {
      text,
      values,
      query_timeout: renewalTimeoutMs(this.#leaseTtlMs),
    };
    return query;
  }

  /**
   * Stops the runs being executed that were cancelled meanwhile. One indexed read of the held runs,
   * cheap enough for every poll, so a cancel lands within a poll interval instead of at the next
   * renewal (a third of the lease); the model call in flight is aborted.
   */
  async stopCancelled(): Promise<void> {
    const ids = [...this.#held.keys()];
    if (ids.length === 0) return;
    const { rows } = await this.#store.pool.query<{ id: string }>(
      `SELECT id FROM ${this.#store.table} WHERE id = ANY($1) AND status = 'cancelled'`,
      [ids],
    );
    for (const { id } of rows) this.#held.get(id)?.tracker.stop('cancelled');
  }

  /**
   * Runs whose holder stopped renewing (a worker killed, a machine gone): each counts as a failed
   * attempt, retried after the back-off from the run's latest checkpoint by whichever worker takes
   * the new job, or failed once the run used up its attempts. A late renewal wins over the reaper.
   */
  async reap(): Promise<void> {
    const { rows } = await this.#store.pool.query<RunRow>(
      `SELECT * FROM ${this.#store.table} WHERE status = 'running' AND lease_expires_at < now()
        ORDER BY lease_expires_at LIMIT 20`,
    );
    for (const row of rows) {
      if (row.holder_token === null) continue;
      const reason = `${row.worker ?? 'its worker'} stopped renewing its hold (attempt ${row.attempts})`;
      await this.#ends.failOrRetry(
        {
          row,
          holderToken: row.holder_token,
          inputTokens: 0,
          outputTokens: 0,
          lastCheckpoint: null,
          currentTask: null,
          onlyExpired: true,
        },
        { error: workerError('aborted', reason), retryable: true },
      );
    }
  }
}
