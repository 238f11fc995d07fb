import { stateError } from '../errors.js';
import { loadedProvider } from '../lazy-provider.js';
import type { CheckpointProvider, LeaseToken } from '../provider.js';

/**
 * The lease a run holds on its lineage head in one store. Writes to that provider and location
 * carry the token, so the store refuses them once the lease is lost; writes elsewhere (a manual
 * `state.checkpoint('./copy')`) do not.
 */
export interface HeldLease {
  provider: CheckpointProvider;
  /** The resolved location (as `provider.resolveLocation` returns it). */
  location: string;
  token: LeaseToken;
  /** Called when a write under the lease was refused with `conflict`: the lease is lost. */
  onLost?: (error: unknown) => void;
}

/** The token a write to `location` (resolved) of `provider` carries: the lease's, when it is held there. */
export function leaseTokenFor(
  lease: HeldLease | undefined,
  provider: CheckpointProvider,
  location: string,
): LeaseToken | undefined {
  return lease !== undefined && lease.provider === provider && lease.location === location
    ? lease.token
    : undefined;
}

/** Where one write goes: the store, and the location as that store resolved it. */
export interface WriteTarget {
  provider: CheckpointProvider;
  resolvedLocation: string;
}

/** Picks the store of each write of a run (see `WriteOptions`) and resolves its location. */
export class WriteTargets {
  readonly #providerFor: ((location: string) => CheckpointProvider | undefined) | undefined;
  #lastResolved:
    | { provider: CheckpointProvider; location: string; directory: string; resolved: string }
    | undefined;

  /** `providerFor`: see `RuntimeStateOptions.providerFor`. */
  constructor(providerFor: ((location: string) => CheckpointProvider | undefined) | undefined) {
    this.#providerFor = providerFor;
  }

  /**
   * The store of a write given `options` (a write's own provider and location), over the run's
   * `provider` and `location`: `options.provider`, else the one `providerFor` picks for
   * `options.location`, else the run's. Refuses (`invalid_config`) a run with none.
   */
  target(
    options: { provider?: CheckpointProvider; location?: string },
    run: { readonly provider: CheckpointProvider | undefined; readonly location: string },
  ): WriteTarget {
    const location = options.location ?? run.location;
    const chosen =
      options.provider ??
      (options.location ? this.#providerFor?.(options.location) : undefined) ??
      run.provider;
    if (!chosen) {
      throw stateError(
        'invalid_config',
        'no checkpoint provider configured for this run; pass a provider or location',
      );
    }
    // One object per store: see loadedProvider.
    const provider = loadedProvider(chosen);
    return { provider, resolvedLocation: this.#resolvedLocation(provider, location) };
  }

  /**
   * `provider.resolveLocation(location)`, kept for the location this run writes to: an automatic
   * checkpoint on every event resolved the same location each time. A location is resolved against
   * the working directory, so a new one resolves it again.
   */
  #resolvedLocation(provider: CheckpointProvider, location: string): string {
    const directory = process.cwd();
    const last = this.#lastResolved;
    if (
      last !== undefined &&
      last.provider === provider &&
      last.location === location &&
      last.directory === directory
    )
      return last.resolved;
    const resolved = provider.resolveLocation(location);
    this.#lastResolved = { provider, location, directory, resolved };
    return resolved;
  }
}
