import { CrewlineError, type EventBus } from '@crewline/events';
import { RuntimeState, readyProvider } from '@crewline/runtime-state';
import { DEFAULT_LEASE_TTL_MS, LineageLease } from '../checkpointing/lineage-lease.js';
import { builtinRegistry } from '../checkpointing/provider-registry.js';
import { trackRunForSignals } from '../checkpointing/signals.js';
import { type StorageTarget, stateBranch, stateLineageId } from './flow-storage.js';

/** What a kickoff of a persisted state holds while it runs (see {@link claimStateLineage}). */
export interface StateLineageClaim {
  /** Aborted when the claim was lost (this process stalled past the lease and another took over). */
  readonly signal: AbortSignal;
  /** Gives the state up (the kickoff ended, failed or paused): another kickoff may take it at once. */
  release(): Promise<void>;
}

export interface StateLineageClaimOptions {
  /** The store the flow saves its state to. */
  target: StorageTarget;
  flowName: string;
  stateId: string;
  /** What runs, for whoever is refused: `flow Report in flow Desk`. */
  what: string;
  /** The bus of the kickoff's run (a signal waits for its handlers, as for the run's). */
  bus: EventBus;
  /** How long the lease lasts without renewal. Default 20 s. */
  ttlMs?: number;
}

/**
 * Claims, for as long as a kickoff of a persisted state runs, the head of the state's own lineage
 * (its name-based id, see `stateLineageId`) in the store it saves to, when the kickoff's run does not
 * claim that lineage itself: a `@persist()` flow kicked off inside another flow's method joins the
 * outer run, whose lease (if any) fences the outer lineage only, and its saves are checkpoints of
 * that lineage; a root kickoff that continues such a save (by the state id, `Flow.resume`,
 * `fromCheckpoint(...).kickoff()`) claims the outer lineage's head. Without this claim, two parent runs (two processes, or two kickoffs in one) kicking off one
 * state id at once both ran its methods and paid for its model calls twice. Every other kickoff of
 * the state holds the same head (a root one that starts or continues the state's own lineage claims
 * it as its run's), so a second kickoff, nested or not, gets the `conflict` naming the state; a
 * holder that died is taken over as for a run (SQLite and JSON at once when its pid is gone on this
 * machine, Postgres once its lease ran out).
 *
 * The lease is held for a run state of its own that stores nothing: the run's writes keep carrying
 * the run's own token. A lineage a root kickoff of the state started has checkpoints: its head is
 * claimed then. `undefined` when the store does not fence heads (a third party's without lease
 * methods). A refusal is the store's `conflict` (said in terms of the state by `stateClaimRefused`).
 * Released before a signal ends the process, as a run's lease is.
 */
export async function claimStateLineage(
  options: StateLineageClaimOptions,
): Promise<StateLineageClaim | undefined> {
  const provider = await readyProvider(options.target.provider);
  if (typeof provider.claimLease !== 'function') return undefined;
  const state = new RuntimeState({
    provider,
    location: options.target.location,
    lineage: {
      lineageId: stateLineageId(options.flowName, options.stateId),
      branch: stateBranch(options.stateId),
    },
    bus: options.bus,
  });
  const claim = (checkpointId: string | null) =>
    LineageLease.claim({
      provider,
      location: options.target.location,
      state,
      checkpointId,
      what: options.what,
      ttlMs: options.ttlMs ?? DEFAULT_LEASE_TTL_MS,
    });
  let lease: LineageLease | undefined;
  try {
    lease = await claim(null);
  } catch (error) {
    // The state's lineage has checkpoints (a root kickoff by its id started it): nobody holds it,
    // so its head is claimed. Held by someone, the refusal names them instead (no headId).
    const headId = CrewlineError.hasCode(error, 'conflict') ? error.details?.headId : undefined;
    if (typeof headId !== 'string') throw error;
    lease = await claim(headId);
  }
  if (lease === undefined) return undefined;
  const held = lease;
  let released = false;
  // Ctrl+C: the signal handler waits for a run holding a lease and releases it before the process
  // ends, so the next kickoff of the state can start at once. Told the run is ending, it records
  // no signal event here (the kickoff's run records it).
  const untrack = trackRunForSignals({
    state,
    bus: options.bus,
    get holdsLease() {
      return !released && !held.signal.aborted;
    },
    providers: builtinRegistry,
    ending: true,
    emit: () => undefined,
    releaseLease: () => held.release(),
  });
  return {
    signal: held.signal,
    async release() {
      released = true;
      try {
        await held.release();
      } finally {
        untrack();
      }
    },
  };
}
