import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { CrewlineError, logger } from '@crewline/events';
import type { CheckpointProvider, Lease, RuntimeState } from '@crewline/runtime-state';
import { localLeaseDeadline } from '@crewline/runtime-state/internal';

const component = 'runtime';

/** `details.reason` of the error a call meets once its run gave up its lineage head (see `ensureHeld`). */
const leaseReleased = 'lease_released';

/**
 * True when `error` is, or was caused by, the `aborted` error a model or tool call meets once its run
 * gave up its lineage head while it went on (the signal path releases it before the process ends):
 * the run was stopped, not failed, and what it was doing continues on resume. Recording a failure
 * would be checkpointed still while the release is in flight, and the run would look failed.
 */
export function stoppedByLeaseRelease(error: unknown): boolean {
  let current = error;
  // A few levels: a call's error may be wrapped (a tool's abort) on its way out.
  for (let depth = 0; depth < 8 && current instanceof Error; depth += 1) {
    if (CrewlineError.hasCode(current, 'aborted') && current.details?.reason === leaseReleased) return true;
    current = current.cause;
  }
  return false;
}

/** How long a lease lasts without renewal unless the config says otherwise. */
export const DEFAULT_LEASE_TTL_MS = 20_000;

/**
 * How long a renewal or a release may take before it counts as failed: under the renewal interval
 * (a third of the lease), so a store that hangs (a partition, a socket nobody answers) fails a
 * renewal in time for the next one to be tried before the lease runs out.
 */
function operationTimeoutMs(ttlMs: number): number {
  return Math.max(1, Math.floor(ttlMs / 4));
}

/**
 * How long claiming the head again may take: a claim can wait behind writes in the store (Postgres
 * gives claims at least 5 s), and the run calls nothing while it waits, so it gets up to half the
 * lease, 5 s at most (a renewal gets a quarter).
 */
function reclaimTimeoutMs(ttlMs: number): number {
  return Math.max(operationTimeoutMs(ttlMs), Math.min(5000, Math.floor(ttlMs / 2)));
}

export interface ClaimOptions {
  provider: CheckpointProvider;
  /** The run's location, unresolved (as configured). */
  location: string;
  state: RuntimeState;
  /** The checkpoint the run continues; `null` for a new lineage (a fresh run or a fork). */
  checkpointId: string | null;
  /** What runs, for the message someone refused sees: `crew Research`. */
  what: string;
  ttlMs: number;
}

/**
 * A run's hold on its lineage head in a store that fences heads (`claimLease`): claimed before the
 * run continues, renewed while it lives (every third of the lease), released when it ends. Once the
 * lease is lost (the process stalled past it and another took the run over), `signal` aborts: the
 * run stops calling models, and its writes are refused by the store.
 *
 * The holder does not wait for the store to say so: a store it cannot reach (a partition, a hung
 * connection) refuses nothing, while another process that reaches it is granted the head once the
 * lease runs out. So the holder counts the lease down itself, from the moment it sent the last claim
 * or renewal the store confirmed (a monotonic clock, minus a safety margin); past that deadline the
 * lease may be lost. The holder then claims the head again, once, as the same owner: granted, no
 * other process held the run meanwhile and the run goes on (a process that was suspended or blocked
 * longer than the lease, with nobody waiting for its run); refused or unanswered, the lease is lost
 * (`ensureHeld` throws, `signal` aborts) and the run must be resumed.
 */
export class LineageLease {
  readonly #controller = new AbortController();
  readonly #provider: CheckpointProvider;
  readonly #location: string;
  readonly #ttlMs: number;
  readonly #lease: Lease;
  readonly #state: RuntimeState;
  /** The checkpoint the run was claimed at (until it stores one of its own). */
  readonly #claimedAt: string | null;
  /** The claim made again once the deadline passed, while it is in flight. */
  #reclaiming: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #deadlineTimer: NodeJS.Timeout | undefined;
  /** `performance.now()` past which the store may have granted the head to someone else. */
  #deadline = 0;
  /** The renewal in flight, if any; it settles within the operation timeout. */
  #renewing: Promise<void> | undefined;
  #released = false;

  private constructor(options: ClaimOptions, location: string, lease: Lease, claimSentAt: number) {
    this.#provider = options.provider;
    this.#location = location;
    this.#ttlMs = options.ttlMs;
    this.#lease = lease;
    this.#state = options.state;
    this.#claimedAt = options.checkpointId;
    this.#confirm(claimSentAt);
    options.state.lease = {
      provider: options.provider,
      location,
      token: { lineageId: lease.lineageId, owner: lease.owner },
      onLost: (error) => this.#lose(error),
    };
    this.#timer = setInterval(() => this.#renew(), Math.max(50, Math.floor(options.ttlMs / 3)));
    // The lease must not keep a process alive that has nothing else to do.
    this.#timer.unref();
  }

  /**
   * Claims the head the run is about to continue; `undefined` when the provider does not fence. A
   * refusal is the store's typed `conflict` error (who holds it and for how long, or that someone
   * continued the checkpoint already).
   */
  static async claim(options: ClaimOptions): Promise<LineageLease | undefined> {
    const { provider } = options;
    if (typeof provider.claimLease !== 'function') return undefined;
    const location = provider.resolveLocation(options.location);
    const claimSentAt = performance.now();
    const lease = await provider.claimLease(location, {
      lineageId: options.state.lineage.lineageId,
      owner: randomUUID(),
      checkpointId: options.checkpointId,
      holder: `${options.what} on ${hostname()}, pid ${process.pid}`,
      ttlMs: options.ttlMs,
    });
    return new LineageLease(options, location, lease, claimSentAt);
  }

  /** Aborted when the lease is lost; its reason is the `conflict` error. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The error that ended the lease, if it was lost. */
  get lostBecause(): CrewlineError | undefined {
    const reason: unknown = this.#controller.signal.reason;
    return this.#controller.signal.aborted && CrewlineError.isInstance(reason) ? reason : undefined;
  }

  /**
   * Resolves while the lease is held; throws the error that ended it when it is lost. Past the
   * deadline without a confirmed renewal (checked before each model and tool call: a timer may fire
   * late on a busy process, the clock does not) it claims the head again first and waits for the
   * answer.
   */
  async ensureHeld(): Promise<void> {
    // Given up (the process ends on a signal while the run still goes on, or the run ended): another
    // process may continue the run from now on, and what this one paid for would not be stored.
    if (this.#released) throw this.#releasedError();
    if (!this.#controller.signal.aborted && performance.now() >= this.#deadline) {
      await this.#deadlinePassed();
    }
    // A renewal was refused and the head is being claimed again: no call until the store answered.
    if (this.#reclaiming !== undefined) await this.#reclaiming;
    const lost = this.lostBecause;
    if (lost !== undefined) throw lost;
  }

  #renew(): void {
    if (this.#released || this.#controller.signal.aborted || !this.#provider.renewLease) return;
    // A renewal still in flight fails on its own timeout; a second one would only queue behind it.
    if (this.#renewing !== undefined) return;
    const renewLease = this.#provider.renewLease.bind(this.#provider);
    const sentAt = performance.now();
    // A provider that throws instead of rejecting fails the renewal too, not the timer's callback.
    const sent = new Promise<unknown>((resolve) =>
      resolve(renewLease(this.#location, this.#token(), this.#ttlMs)),
    );
    // Answered after its timeout, a renewal still says the store holds the lease until `sentAt` +
    // the lease time at the earliest: a slow store does not stop the run, an unreachable one does.
    sent.then(
      () => this.#confirm(sentAt),
      (error: unknown) => {
        if (CrewlineError.hasCode(error, 'conflict')) void this.#deadlinePassed();
      },
    );
    const renewal = withTimeout(sent, operationTimeoutMs(this.#ttlMs), () =>
      this.#timeoutError('renewing the lease'),
    );
    this.#renewing = renewal.then(
      () => this.#confirm(sentAt),
      (error: unknown) => {
        // A store that is briefly unreachable is retried on the next tick (the deadline stops the
        // run if it stays so). A refusal is a lease that ran out (a store that does not renew an
        // expired lease) or was taken over: claiming the head again tells which.
        if (CrewlineError.hasCode(error, 'conflict')) void this.#deadlinePassed();
        else logger.warn(component, `renewing the lease on run ${this.#lease.lineageId} failed`, error);
      },
    );
    void this.#renewing.finally(() => {
      this.#renewing = undefined;
    });
  }

  /** The store holds the lease for this process until `sentAt` + the lease time, at the earliest. */
  #confirm(sentAt: number): void {
    if (this.#released || this.#controller.signal.aborted) return;
    const deadline = localLeaseDeadline(sentAt, this.#ttlMs);
    if (deadline <= this.#deadline) return;
    this.#deadline = deadline;
    this.#stopDeadlineTimer();
    this.#deadlineTimer = setTimeout(
      () => void this.#deadlinePassed(),
      Math.max(0, deadline - performance.now()),
    );
    this.#deadlineTimer.unref();
  }

  /**
   * The lease may have run out in the store: claims the head again as the same owner (one claim in
   * flight at a time). Granted only if nobody else holds the run and its head is still the run's
   * last stored checkpoint, so no other process continued it meanwhile; anything else loses the
   * lease.
   */
  #deadlinePassed(): Promise<void> {
    this.#reclaiming ??= this.#reclaim().finally(() => {
      this.#reclaiming = undefined;
    });
    return this.#reclaiming;
  }

  async #reclaim(): Promise<void> {
    if (this.#released || this.#controller.signal.aborted) return;
    const bound = reclaimTimeoutMs(this.#ttlMs);
    let claim: Promise<Lease> | undefined;
    try {
      // The head to claim is the run's newest stored checkpoint: a write in flight lands first (a
      // claim naming its parent would be refused as "not the head" once it commits).
      await withTimeout(
        this.#state.durable().catch(() => undefined),
        bound,
        () => this.#timeoutError('writing the checkpoints in flight before claiming the head again', bound),
      );
      const sentAt = performance.now();
      claim = Promise.resolve().then(() =>
        this.#provider.claimLease!(this.#location, {
          lineageId: this.#lease.lineageId,
          owner: this.#lease.owner,
          checkpointId: this.#state.lastStored?.id ?? this.#claimedAt,
          holder: this.#lease.holder,
          ttlMs: this.#ttlMs,
        }),
      );
      await withTimeout(claim, bound, () => this.#timeoutError('claiming the head again', bound));
      logger.warn(
        component,
        `run ${this.#lease.lineageId} went past its lease without a confirmed renewal (the process was blocked or suspended, or the store slow); nobody took it over, it holds the head again`,
      );
      this.#confirm(sentAt);
    } catch (error) {
      // Someone else holds the run, or continued it: their refusal names them. Otherwise the store
      // could not be reached in time.
      if (CrewlineError.hasCode(error, 'conflict')) this.#lose(error);
      else this.#expire(error);
      // A claim granted after the run gave up would keep others out for a lease time: given back.
      void claim?.then(
        () => this.#provider.releaseLease?.(this.#location, this.#token()),
        () => undefined,
      );
    }
  }

  #expire(cause: unknown): void {
    this.#lose(
      new CrewlineError(
        component,
        'conflict',
        `the lease on run ${this.#lease.lineageId} could not be renewed in time (lease ${this.#ttlMs} ms; ` +
          'the store is unreachable or too slow): another process may continue the run ' +
          'now, so this one stops before its next call; resume the run from its latest checkpoint, ' +
          'or raise `leaseTtlMs` if the store is only slow',
        {
          details: { lineageId: this.#lease.lineageId, reason: 'lease_not_renewed', ttlMs: this.#ttlMs },
          cause,
        },
      ),
    );
  }

  #releasedError(): CrewlineError {
    return new CrewlineError(
      component,
      'aborted',
      `run ${this.#lease.lineageId} gave up its lineage head (it ended, or its process is ending on a signal): no model or tool call is made after that; resume it from its latest checkpoint`,
      { details: { lineageId: this.#lease.lineageId, reason: leaseReleased } },
    );
  }

  #timeoutError(what: string, ms = operationTimeoutMs(this.#ttlMs)): CrewlineError {
    return new CrewlineError(
      component,
      'provider_unavailable',
      `${what} on run ${this.#lease.lineageId} took longer than ${ms} ms; check that the store is reachable from this process`,
    );
  }

  #lose(error: unknown): void {
    if (this.#released || this.#controller.signal.aborted) return;
    this.#stopTimer();
    this.#stopDeadlineTimer();
    const reason = CrewlineError.isInstance(error)
      ? error
      : new CrewlineError(component, 'conflict', 'the lease on this run was lost', { cause: error });
    logger.warn(component, `run ${this.#lease.lineageId} lost its lease and stops (${reason.message})`);
    this.#controller.abort(reason);
  }

  /** Gives the lease up (the run ended, failed or paused): another process may continue at once. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    this.#stopTimer();
    this.#stopDeadlineTimer();
    // The state keeps the token: a write after the release (a run still finishing while the process
    // ends on a signal) is refused by the store rather than written unfenced. A renewal in flight
    // is waited for (at most its timeout), so it cannot extend the lease after the release.
    await this.#renewing;
    // A claim made again in flight would otherwise be granted after the release and hold the run.
    await this.#reclaiming;
    if (this.#controller.signal.aborted || !this.#provider.releaseLease) return;
    try {
      await withTimeout(
        this.#provider.releaseLease(this.#location, this.#token()),
        operationTimeoutMs(this.#ttlMs),
        () => this.#timeoutError('releasing the lease'),
      );
    } catch (error) {
      // It runs out on its own; another process waits at most the lease time.
      logger.warn(component, `releasing the lease on run ${this.#lease.lineageId} failed`, error);
    }
  }

  #token() {
    return { lineageId: this.#lease.lineageId, owner: this.#lease.owner };
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #stopDeadlineTimer(): void {
    if (this.#deadlineTimer !== undefined) clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = undefined;
  }
}

/** `operation`, or the error `timedOut` makes once `ms` passed without an answer. */
async function withTimeout<T>(operation: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), ms);
  });
  try {
    return await Promise.race([operation, late]);
  } finally {
    clearTimeout(timer);
  }
}
