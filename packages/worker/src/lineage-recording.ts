import { logger } from '@crewline/events';
import type { CheckpointProvider, Lease, LeaseRequest } from '@crewline/runtime-state';
import { component, workerError } from './errors.js';
import type { QueueStore } from './queue-store.js';

/**
 * Writes a run's checkpoint lineage on its row, under the attempt's hold: awaited before the run
 * claims the lineage's head (see {@link announcingLineageClaims}), and, for providers without leases,
 * in the background at the run's first event (`recordSoon`). A lineage already recorded is not
 * written again.
 */
export class LineageRecorder {
  readonly #store: QueueStore;
  readonly #runId: string;
  readonly #holderToken: string;
  #recorded: string | null;
  #background: Promise<unknown> = Promise.resolve();

  constructor(store: QueueStore, run: { runId: string; holderToken: string; lineageId: string | null }) {
    this.#store = store;
    this.#runId = run.runId;
    this.#holderToken = run.holderToken;
    this.#recorded = run.lineageId;
  }

  /** Records `lineageId`; rejects when the hold is gone (nothing of the lineage may be written then). */
  async record(lineageId: string): Promise<void> {
    if (lineageId === this.#recorded) return;
    const { rowCount } = await this.#store.pool.query(
      `UPDATE ${this.#store.table} SET lineage_id = $3 WHERE id = $1 AND holder_token = $2`,
      [this.#runId, this.#holderToken, lineageId],
    );
    if (rowCount !== 1) {
      throw workerError(
        'conflict',
        `run ${this.#runId} is no longer held by this worker (cancelled, or taken over after its hold ran out); its lineage ${lineageId} is not started here`,
      );
    }
    this.#recorded = lineageId;
  }

  /** Records `lineageId` in the background (failures logged); {@link settled} waits for it. */
  recordSoon(lineageId: string): void {
    this.#background = this.#background.then(() =>
      this.record(lineageId).catch((error) =>
        logger.warn(component, `recording the lineage of run ${this.#runId} failed`, error),
      ),
    );
  }

  settled(): Promise<unknown> {
    return this.#background;
  }
}

/**
 * The provider a run checkpoints through, which waits for `beforeClaim` each time the run claims a
 * lineage head. The runtime claims the head before it writes the lineage's first checkpoint, so the
 * worker can record the lineage on the run's row before any checkpoint of it exists: a worker killed
 * at any moment leaves no checkpoint in a lineage the next attempt does not know (it would start the
 * run over). A provider without leases is returned as it is (the worker then records the lineage at
 * the run's first event).
 */
export function announcingLineageClaims(
  provider: CheckpointProvider,
  beforeClaim: (lineageId: string) => Promise<void>,
): CheckpointProvider {
  return withClaims(provider, (claimLease) => async (location, request) => {
    await beforeClaim(request.lineageId);
    return claimLease(location, request);
  });
}

/** A provider's `claimLease`. */
export type ClaimLease = (location: string, request: LeaseRequest) => Promise<Lease>;

/**
 * `provider` with its lineage-head claims made through `wrap` (given the provider's own claim); a
 * provider without leases is returned as it is.
 */
export function withClaims(
  provider: CheckpointProvider,
  wrap: (claimLease: ClaimLease) => ClaimLease,
): CheckpointProvider {
  const claimLease = provider.claimLease;
  if (claimLease === undefined) return provider;
  const claim = wrap((location, request) => claimLease.call(provider, location, request));
  // A proxy, not a copy: the provider's methods keep their own `this` (private fields), and every
  // other member (capabilities, kind, close) is the provider's own.
  return new Proxy(provider, {
    get(target, key) {
      if (key === 'claimLease') return claim;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
