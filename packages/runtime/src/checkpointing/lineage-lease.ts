import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { CrewlineError, logger } from '@crewline/events';
import type { CheckpointProvider, Lease, RuntimeState } from '@crewline/runtime-state';

const component = 'runtime';

/** How long a lease lasts without renewal unless the config says otherwise. */
export const DEFAULT_LEASE_TTL_MS = 20_000;

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
 */
export class LineageLease {
  readonly #controller = new AbortController();
  readonly #provider: CheckpointProvider;
  readonly #location: string;
  readonly #ttlMs: number;
  readonly #lease: Lease;
  #timer: NodeJS.Timeout | undefined;
  #renewing: Promise<unknown> = Promise.resolve();
  #released = false;

  private constructor(options: ClaimOptions, location: string, lease: Lease) {
    this.#provider = options.provider;
    this.#location = location;
    this.#ttlMs = options.ttlMs;
    this.#lease = lease;
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
    const lease = await provider.claimLease(location, {
      lineageId: options.state.lineage.lineageId,
      owner: randomUUID(),
      checkpointId: options.checkpointId,
      holder: `${options.what} on ${hostname()}, pid ${process.pid}`,
      ttlMs: options.ttlMs,
    });
    return new LineageLease(options, location, lease);
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

  #renew(): void {
    if (this.#released || this.#controller.signal.aborted || !this.#provider.renewLease) return;
    const renewLease = this.#provider.renewLease.bind(this.#provider);
    this.#renewing = this.#renewing.then(async () => {
      if (this.#released) return;
      try {
        await renewLease(this.#location, this.#token(), this.#ttlMs);
      } catch (error) {
        // A store that is briefly unreachable is retried on the next tick; only a refusal ends it.
        if (CrewlineError.hasCode(error, 'conflict')) this.#lose(error);
        else logger.warn(component, `renewing the lease on run ${this.#lease.lineageId} failed`, error);
      }
    });
  }

  #lose(error: unknown): void {
    if (this.#released || this.#controller.signal.aborted) return;
    this.#stopTimer();
    const reason = CrewlineError.isInstance(error)
      ? error
      : new CrewlineError(component, 'conflict', 'the lease on this run was lost', { cause: error });
    logger.warn(
      component,
      `run ${this.#lease.lineageId} lost its lease and stops: another process continues it (${reason.message})`,
    );
    this.#controller.abort(reason);
  }

  /** Gives the lease up (the run ended, failed or paused): another process may continue at once. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    this.#stopTimer();
    // The state keeps the token: a write after the release (a run still finishing while the process
    // ends on a signal) is refused by the store rather than written unfenced.
    await this.#renewing;
    if (this.#controller.signal.aborted || !this.#provider.releaseLease) return;
    try {
      await this.#provider.releaseLease(this.#location, this.#token());
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
}
