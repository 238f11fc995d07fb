import { CrewlineError } from '@crewline/events';
import { retryDelayMs } from './backoff.js';
import { messageOf } from './errors.js';
import type { QueueStore } from './queue-store.js';
import type { RunRow } from './run-record.js';

/** How an attempt ended, as the run's row records it. */
export type AttemptEndKind = 'completed' | 'failed' | 'retry' | 'handed-back' | 'lost';

/** Input and output tokens. */
export interface TokenCount {
  input: number;
  output: number;
}

/** The tokens of an attempt as its end writes them (see {@link addedTokens}). */
export interface AttemptTokens {
  holderToken: string;
  /** Tokens no renewal carried (since the last one was sent). */
  inputTokens: number;
  outputTokens: number;
  /** The running total the renewals of the attempt carried, confirmed or not; none when omitted. */
  renewedTokens?: TokenCount;
  /** Of those, the total a renewal the server confirmed carried. */
  confirmedTokens?: TokenCount;
}

/**
 * The SET clauses adding to the row's token counters what the attempt used and the row did not count
 * yet: the tokens no renewal carried (`$3`, `$4` of the statement), and of the renewals' running total
 * what the row did not count from them. While the row remembers this hold's renewals (`renewal_holder`)
 * it knows what it counted, even of a renewal that timed out on the client but applied on the server;
 * once another hold renewed, the worker's confirmed total stands for it. `holderParameter` names the
 * statement's parameter holding the attempt's hold token. The totals are integers of the worker's own
 * counting, written as literals so the callers' parameters keep their numbers.
 */
export function addedTokens(attempt: AttemptTokens, holderParameter: string): string {
  const renewed = attempt.renewedTokens ?? { input: 0, output: 0 };
  const confirmed = attempt.confirmedTokens ?? { input: 0, output: 0 };
  const uncounted = (kind: 'input' | 'output') =>
    `greatest(${integer(renewed[kind])} - CASE WHEN renewal_holder = ${holderParameter}
       THEN renewal_${kind}_tokens ELSE ${integer(confirmed[kind])} END, 0)`;
  return `input_tokens = input_tokens + $3 + ${uncounted('input')},
          output_tokens = output_tokens + $4 + ${uncounted('output')}`;
}

function integer(value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`not a token count: ${value}`);
  return String(value);
}

/** The attempt being ended: its run, the hold it ran under, and what it did since the last renewal. */
export interface EndingAttempt extends AttemptTokens {
  row: RunRow;
  /** The hold the attempt ran under; the end is written only while the row still carries it. */
  holderToken: string;
  lastCheckpoint: string | null;
  currentTask: string | null;
  /**
   * The reaper ends the attempt of a worker that vanished: only while its hold has still run out
   * (a late renewal wins).
   */
  onlyExpired?: boolean;
}

/** Back-off of retries: the first waits `baseMs`, each next one twice as long, at most `maxMs`. */
export interface RetryPolicy {
  baseMs: number;
  maxMs: number;
}

/**
 * Writes the end of attempts under their hold: every statement names the run and its holder token
 * (a hold taken over or cancelled meanwhile makes it a no-op, reported as `lost`), adds the
 * attempt's last tokens and progress, and gives the hold up.
 */
export class AttemptEnds {
  readonly #store: QueueStore;
  readonly #retry: RetryPolicy;

  constructor(store: QueueStore, retry: RetryPolicy) {
    this.#store = store;
    this.#retry = retry;
  }

  async complete(attempt: EndingAttempt, output: string): Promise<AttemptEndKind> {
    const [set, where, values] = this.#common(attempt);
    const done = await this.#store.pool.query(
      `UPDATE ${this.#store.table} SET ${set}, status = 'completed', output = $7, error_code = NULL,
              finished_at = now() ${where}`,
      [...values, output],
    );
    return done.rowCount === 1 ? 'completed' : 'lost';
  }

  /**
   * The end of an attempt whose run was cancelled under it: the cancel gave the hold up (so no
   * statement under the hold matches), yet what the attempt did since its last renewal belongs on the
   * row, or `crewline runs list` keeps the tokens and task of the last renewal. A cancelled run is
   * never taken again, so its attempt number names this attempt.
   */
  async recordCancelled(attempt: EndingAttempt): Promise<'cancelled'> {
    await this.#store.pool.query(
      `UPDATE ${this.#store.table}
          SET ${addedTokens(attempt, '$7')},
              last_checkpoint = coalesce($5, last_checkpoint), current_task = coalesce($6, current_task),
              updated_at = now()
        WHERE id = $1 AND attempts = $2 AND status = 'cancelled'`,
      [
        attempt.row.id,
        attempt.row.attempts,
        attempt.inputTokens,
        attempt.outputTokens,
        attempt.lastCheckpoint,
        attempt.currentTask,
        attempt.holderToken,
      ],
    );
    return 'cancelled';
  }

  /**
   * The end of an attempt that no longer holds its run (its end under the hold matched nothing): a
   * run cancelled under it — as it completed, failed or was handed back — is recorded as cancelled
   * ({@link recordCancelled}); a run whose hold another worker took over (this worker stopped past
   * its lease, or cut off from Postgres) still gets this attempt's tokens, which were paid for, but
   * not its task or checkpoint, which the new holder's attempt owns.
   */
  async recordUnheld(attempt: EndingAttempt): Promise<'cancelled' | 'lost'> {
    const { rows } = await this.#store.pool.query<{ status: string }>(
      `UPDATE ${this.#store.table}
          SET ${addedTokens(attempt, '$5')}
        WHERE id = $1 AND NOT (status = 'cancelled' AND attempts = $2) RETURNING status`,
      [attempt.row.id, attempt.row.attempts, attempt.inputTokens, attempt.outputTokens, attempt.holderToken],
    );
    if (rows.length === 1) return 'lost';
    return this.recordCancelled(attempt);
  }

  /** Fails the run for good with `reason` (no retry: a timeout, a reason a retry cannot fix). */
  async fail(
    attempt: EndingAttempt,
    reason: string,
    code: string | null,
    failed = 0,
  ): Promise<AttemptEndKind> {
    const [set, where, values] = this.#common(attempt);
    const done = await this.#store.pool.query(
      `UPDATE ${this.#store.table} SET ${set}, status = 'failed', failures = failures + $7, error = $8,
              error_code = $9, finished_at = now() ${where}`,
      [...values, failed, reason, code],
    );
    return done.rowCount === 1 ? 'failed' : 'lost';
  }

  /**
   * The one place a failed attempt becomes either a retry or the run's failure: a failure a retry
   * cannot fix, or the last of `maxAttempts`, fails the run; any other is retried after the back-off,
   * from the run's latest checkpoint.
   */
  async failOrRetry(
    attempt: EndingAttempt,
    failure: { error: unknown; retryable: boolean },
  ): Promise<AttemptEndKind> {
    const { row } = attempt;
    const failures = row.failures + 1;
    const code = CrewlineError.isInstance(failure.error) ? failure.error.code : null;
    if (!failure.retryable) return this.fail(attempt, messageOf(failure.error), code, 1);
    if (failures >= row.max_attempts) {
      const reason = `${messageOf(failure.error)} (failed ${failures} of ${row.max_attempts} attempts)`;
      return this.fail(attempt, reason, code, 1);
    }
    const waitMs = retryDelayMs(failures, this.#retry.baseMs, this.#retry.maxMs);
    return this.requeue(attempt, { waitMs, failed: true, reason: messageOf(failure.error) });
  }

  /**
   * Puts the run back in the queue with a new job that starts after `waitMs` (server clock, to the
   * millisecond): a hand-back (`waitMs` 0, not a failure) or a retry.
   */
  async requeue(
    attempt: EndingAttempt,
    next: { waitMs: number; failed: boolean; reason?: string },
  ): Promise<AttemptEndKind> {
    const [set, where, values] = this.#common(attempt);
    const { row } = attempt;
    const kind: AttemptEndKind = next.failed || next.waitMs > 0 ? 'retry' : 'handed-back';
    return this.#store
      .transaction(async (client) => {
        const jobId = await this.#store.sendAttempt(
          client,
          { id: row.id, priority: row.priority, timeoutMs: row.timeout_ms },
          next.waitMs,
        );
        const updated = await client.query(
          `UPDATE ${this.#store.table} SET ${set}, status = 'queued', job_id = $7,
                  failures = failures + $8, error = coalesce($9, error)
            ${where}`,
          [...values, jobId, next.failed ? 1 : 0, next.reason ?? null],
        );
        if (updated.rowCount !== 1) throw new RollBack();
        return kind;
      })
      .catch((error) => {
        if (error instanceof RollBack) return 'lost' as const;
        throw error;
      });
  }

  #common(attempt: EndingAttempt): [set: string, where: string, values: unknown[]] {
    const set = `${addedTokens(attempt, '$2')},
                 last_checkpoint = coalesce($5, last_checkpoint), current_task = coalesce($6, current_task),
                 holder_token = NULL, lease_expires_at = NULL, worker = NULL, updated_at = now()`;
    const where = `WHERE id = $1 AND holder_token = $2 AND status = 'running'${
      attempt.onlyExpired ? ' AND lease_expires_at < now()' : ''
    }`;
    return [
      set,
      where,
      [
        attempt.row.id,
        attempt.holderToken,
        attempt.inputTokens,
        attempt.outputTokens,
        attempt.lastCheckpoint,
        attempt.currentTask,
      ],
    ];
  }
}

/** Undoes the new job of a requeue whose hold was gone. */
class RollBack extends Error {}
