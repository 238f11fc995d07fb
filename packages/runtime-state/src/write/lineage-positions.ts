import { LazyProvider } from '../lazy-provider.js';
import type { CheckpointProvider } from '../provider.js';

/** Where a run's chain of checkpoints stands in one store: what its next write there names as parent. */
export interface LineagePosition {
  /** The run's last checkpoint in the store, or the checkpoint the run started from; `null` for none. */
  checkpointId: string | null;
  /** How many events that checkpoint holds: the leading events the next write shares with it. */
  eventCount: number;
}

/**
 * The position of a run's chain in each store (provider and resolved location) it writes to.
 *
 * A run may write to several stores: an agent with a checkpoint setting of its own writes its
 * events beside the crew's. Each store keeps a chain of its own, so that every checkpoint names a
 * parent its store holds: retention (`maxCheckpoints`, planPrune) sees each checkpoint continued
 * there, and incremental stores (SQLite, Postgres) share events and entities with that parent
 * instead of storing a full copy. A chain that named the run's last checkpoint wherever it went
 * would name parents held by another store at every switch.
 *
 * A store the run has not written to yet starts from the run's origin: the checkpoint it was
 * restored (or forked) from, wherever that is stored, or none for a new run. Resuming or forking a
 * checkpoint of either store therefore names it as the parent of the first write in each store.
 */
export class LineagePositions {
  readonly #origin: LineagePosition;
  /** Keyed by provider object, as the write queue and the lease are: one store per instance and location. */
  readonly #stores = new Map<CheckpointProvider, Map<string, TakenPosition>>();
  /** Orders the positions taken, across providers: the latest of a store's is its position. */
  #taken = 0;

  constructor(origin: LineagePosition) {
    this.#origin = { ...origin };
  }

  /**
   * The parent of the next write to `location` (resolved) of `provider`. What was written there
   * through the stand-in of `provider` while its package was still being imported counts as written
   * through `provider` (one store, two objects; see loadedProvider): the latest of both.
   */
  at(provider: CheckpointProvider, location: string): LineagePosition {
    let latest = this.#stores.get(provider)?.get(location);
    for (const [known, locations] of this.#stores) {
      if (!(known instanceof LazyProvider) || known.loaded !== provider) continue;
      const taken = locations.get(location);
      if (taken !== undefined && (latest === undefined || taken.order > latest.order)) latest = taken;
    }
    return latest === undefined
      ? this.#origin
      : { checkpointId: latest.checkpointId, eventCount: latest.eventCount };
  }

  /** The stores written to, each once: the provider (the loaded one for a stand-in) and the location. */
  stores(): { provider: CheckpointProvider; location: string }[] {
    const seen = new Map<CheckpointProvider, Set<string>>();
    for (const [known, locations] of this.#stores) {
      const provider = known instanceof LazyProvider ? (known.loaded ?? known) : known;
      const set = seen.get(provider) ?? new Set<string>();
      for (const location of locations.keys()) set.add(location);
      seen.set(provider, set);
    }
    return [...seen].flatMap(([provider, locations]) =>
      [...locations].map((location) => ({ provider, location })),
    );
  }

  /**
   * Moves the chain of one store to `next` (a write was taken: the next one there names it). Returns
   * the undo for when that write fails: the chain goes back to where it stood, unless a later write
   * to the store moved it on meanwhile (that one is rejected too, newest first, and undoes itself).
   */
  advance(provider: CheckpointProvider, location: string, next: LineagePosition): () => void {
    let locations = this.#stores.get(provider);
    if (locations === undefined) {
      locations = new Map();
      this.#stores.set(provider, locations);
    }
    const previous = locations.get(location);
    this.#taken += 1;
    const taken = { ...next, order: this.#taken };
    locations.set(location, taken);
    return () => {
      if (locations.get(location) !== taken) return;
      if (previous === undefined) locations.delete(location);
      else locations.set(location, previous);
    };
  }
}

/** A position taken by a write, with the order it was taken in. */
interface TakenPosition extends LineagePosition {
  order: number;
}
