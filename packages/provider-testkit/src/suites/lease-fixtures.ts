import type { CrewlineError } from '@crewline/events';
import type {
  CheckpointProvider,
  CheckpointWrite,
  LeaseRequest,
  LeaseToken,
  StoredCheckpoint,
} from '@crewline/runtime-state';
import { expect, type TestContext } from 'vitest';
import { expectCrewlineError, idsOf } from '../assertions.js';
import { advanceTestRun, buildCheckpointWrite, createTestRun } from '../fixtures/test-run.js';
import type { Harness } from '../harness.js';

// What the leases suite builds its tests from: a run written straight to the provider, the
// refusal it expects, and the set-up each test starts with.

/** A lease nobody outlives in a test. */
export const longTtlMs = 60_000;
/** A lease that runs out during a test, and how long to wait for that (twice over, for loaded machines). */
export const shortTtlMs = 200;
export const pastShortTtlMs = 400;

/** How long a lease has left, as the refusal must say it: a number and a unit. */
const durationPattern = /\d+(\.\d+)?\s*(ms|s|sec|seconds?|min|minutes?)\b/;

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Names shown to whoever is refused; no digits, so the duration check finds the provider's own. */
export function holderOf(owner: string): string {
  return `worker ${owner} on test-host`;
}

/**
 * One run (lineage) whose checkpoints a test writes straight to the provider, each naming the
 * previous one as its parent, with or without a lease token.
 */
export class Lineage {
  readonly #run = createTestRun();
  readonly ids: string[] = [];

  constructor(
    readonly provider: CheckpointProvider,
    readonly location: string,
  ) {}

  get lineageId(): string {
    return this.#run.state.lineage.lineageId;
  }

  /** The newest checkpoint written (what a claim must name), `null` before the first. */
  get head(): string | null {
    return this.ids.at(-1) ?? null;
  }

  token(owner: string): LeaseToken {
    return { lineageId: this.lineageId, owner };
  }

  /** A claim of the head by `owner`, with a long lease unless `overrides` say otherwise. */
  request(owner: string, overrides: Partial<LeaseRequest> = {}): LeaseRequest {
    return {
      lineageId: this.lineageId,
      owner,
      checkpointId: this.head,
      holder: holderOf(owner),
      ttlMs: longTtlMs,
      ...overrides,
    };
  }

  /** The next checkpoint of the run, not stored yet. */
  next(lease?: LeaseToken): CheckpointWrite {
    advanceTestRun(this.#run);
    return buildCheckpointWrite({
      run: this.#run,
      metadata: { parentId: this.head },
      ...(lease === undefined ? {} : { lease }),
    });
  }

  async write(
    options: { lease?: LeaseToken; sync?: boolean; provider?: CheckpointProvider } = {},
  ): Promise<StoredCheckpoint> {
    const provider = options.provider ?? this.provider;
    const write = this.next(options.lease);
    const stored =
      options.sync && provider.writeSync
        ? provider.writeSync(this.location, write)
        : await provider.write(this.location, write);
    expect(stored.id).toBe(write.metadata.id);
    this.ids.push(stored.id);
    return stored;
  }

  /**
   * Writes under `lease` (sync and async, when the provider can) and expects each write refused
   * with `conflict` and nothing stored: the listing stays as it was, the id reads as `not_found`.
   */
  async expectRefusedWrite(
    lease: LeaseToken,
    what: string,
    codes: readonly CrewlineError['code'][] = ['conflict'],
  ): Promise<CrewlineError> {
    const before = idsOf(await this.provider.list(this.location));
    let refusal: CrewlineError | undefined;
    for (const sync of this.provider.writeSync ? [true, false] : [false]) {
      const write = this.next(lease);
      refusal = await expectCrewlineError(
        () =>
          sync ? this.provider.writeSync!(this.location, write) : this.provider.write(this.location, write),
        codes,
        `a ${sync ? 'writeSync' : 'write'} ${what}`,
      );
      expect(idsOf(await this.provider.list(this.location)), `a write ${what} stored something`).toEqual(
        before,
      );
      await expectCrewlineError(
        () => this.provider.read(this.location, write.metadata.id),
        ['not_found'],
        `reading the checkpoint of a refused write ${what}`,
      );
    }
    return refusal!;
  }
}

/** The refusal names who holds the lease and how long it has left, in its message and details. */
export function expectHeldBy(
  error: CrewlineError,
  lineageId: string,
  holder: string,
  ttlMs = longTtlMs,
): void {
  expect(error.message, 'the refusal names the holder').toContain(holder);
  expect(error.message, 'the refusal says how long the lease has left').toMatch(durationPattern);
  expect(error.details?.lineageId).toBe(lineageId);
  expect(error.details?.holder).toBe(holder);
  const left = error.details?.expiresInMs;
  expect(typeof left, 'details.expiresInMs is a number').toBe('number');
  expect(left as number).toBeGreaterThan(0);
  expect(left as number).toBeLessThanOrEqual(ttlMs);
}

/**
 * A refused claim (not a refused write): {@link expectHeldBy}, and `details.atClaim`, which tells a
 * caller that nothing ran yet, so it can offer to fork instead (the CLI names `--on-conflict fork`).
 */
export function expectClaimHeldBy(error: CrewlineError, lineageId: string, holder: string): void {
  expectHeldBy(error, lineageId, holder);
  expect(error.details?.atClaim, 'details.atClaim: the refusal came before anything ran').toBe(true);
}

/** The set-up of the leases suite's tests on `harness`. */
export function leaseFixtures(harness: Harness) {
  const persistent = harness.options.persistent ?? true;

  /**
   * A provider and a fresh location; the test is skipped (with the reason) when the provider does
   * not declare `capabilities.leases`. Providers can be created asynchronously, so the
   * declaration is only known inside a test.
   */
  async function leasing(context: TestContext) {
    const setup = await harness.setup();
    if (!setup.provider.capabilities.leases) {
      context.skip(
        `${harness.options.name} does not declare capabilities.leases; the leases suite does not apply`,
      );
    }
    return setup;
  }

  /** {@link leasing}, with one lineage that has `checkpoints` checkpoints. */
  async function setup(context: TestContext, checkpoints = 1) {
    const { provider, location } = await leasing(context);
    const lineage = new Lineage(provider, location);
    for (let index = 0; index < checkpoints; index += 1) await lineage.write();
    return { provider, location, lineage };
  }

  /** Another process's view of the store: a second instance when the provider persists, else the same one. */
  async function otherClaimer(provider: CheckpointProvider): Promise<CheckpointProvider> {
    return persistent ? harness.provider() : provider;
  }

  function claim(provider: CheckpointProvider, location: string, request: LeaseRequest) {
    return provider.claimLease!(location, request);
  }

  /** A write under `lease` whose outcome does not matter (the short lease may have run out already). */
  async function tryWrite(lineage: Lineage, lease: LeaseToken): Promise<void> {
    await lineage.write({ lease }).catch(() => {
      // A loaded machine may already be past a short lease; what matters is what follows.
    });
  }

  return { leasing, setup, otherClaimer, claim, tryWrite };
}
