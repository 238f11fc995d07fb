// How RuntimeState groups its async writes: the checkpoints a run queues one after another go to the
// provider as one group, so that the barrier before the next model call waits for one round of
// flushes, not for a lone write followed by the rest.
import { CrewlineError, EventBus } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import type { CheckpointWrite, StoredCheckpoint } from './provider.js';
import { RuntimeState } from './runtime-state.js';
import { FakeCrew } from './test-support/fake-crew.js';
import { InMemoryProvider } from './testing/in-memory-provider.js';

/** The in-memory provider with a `writeBatch`, recording how many checkpoints each call was given. */
class GroupingProvider extends InMemoryProvider {
  readonly calls: number[] = [];

  override async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    this.calls.push(1);
    return super.write(location, checkpoint);
  }

  async writeBatch(location: string, checkpoints: readonly CheckpointWrite[]): Promise<StoredCheckpoint[]> {
    this.calls.push(checkpoints.length);
    const stored: StoredCheckpoint[] = [];
    for (const checkpoint of checkpoints) stored.push(await super.write(location, checkpoint));
    return stored;
  }
}

function setup() {
  const provider = new GroupingProvider();
  const state = new RuntimeState({
    provider,
    location: 'mem',
    entities: [new FakeCrew(2)],
    bus: new EventBus(),
  });
  return { provider, state };
}

describe('RuntimeState async write groups', () => {
  it('hands the checkpoints queued in one turn of the event loop to the provider as one group', async () => {
    const { provider, state } = setup();
    const writes = [state.writeCheckpoint(), state.writeCheckpoint(), state.writeCheckpoint()];
    const stored = await Promise.all(writes);
    expect(provider.calls).toEqual([3]);
    // In lineage order, each the parent of the next.
    expect(stored.map((entry) => entry.parentId)).toEqual([null, stored[0]!.id, stored[1]!.id]);
  });

  it('starts the group at once when the run reaches the barrier (durable) before the turn ends', async () => {
    const { provider, state } = setup();
    const writes = [state.writeCheckpoint(), state.writeCheckpoint()];
    const barrier = state.durable();
    // The group is with the provider before anything else of this turn runs.
    expect(provider.calls).toEqual([2]);
    await barrier;
    await Promise.all(writes);
    expect(state.hasPendingWork).toBe(false);
  });

  it('writes what queued during a group as the next group, and durable() waits for both', async () => {
    const { provider, state } = setup();
    const first = state.writeCheckpoint();
    const barrier = state.durable();
    const later = [state.writeCheckpoint(), state.writeCheckpoint()];
    await state.durable();
    expect(provider.calls).toEqual([1, 2]);
    expect(state.hasPendingWork).toBe(false);
    await barrier;
    await Promise.all([first, ...later]);
  });
});

/**
 * Fails its `failAt`-th single write (1-based; the async write goes through writeSync) and every batch, like a
 * disk that filled up in the middle of a group; later writes succeed again.
 */
class FailingProvider extends GroupingProvider {
  writes = 0;
  constructor(readonly failAt: number) {
    super();
  }

  #next(): void {
    this.writes += 1;
    if (this.writes === this.failAt)
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
  }

  override writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    this.#next();
    return super.writeSync(location, checkpoint);
  }

  override async writeBatch(): Promise<StoredCheckpoint[]> {
    throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
  }
}

function failingSetup(failAt: number) {
  const provider = new FailingProvider(failAt);
  const state = new RuntimeState({
    provider,
    location: 'mem',
    entities: [new FakeCrew(2)],
    bus: new EventBus(),
  });
  return { provider, state };
}

/** Every stored checkpoint's parent is stored too (or it is the first of its lineage). */
async function expectNoOrphans(provider: InMemoryProvider): Promise<StoredCheckpoint[]> {
  const stored = await provider.list('mem');
  const ids = new Set(stored.map((entry) => entry.id));
  for (const entry of stored) if (entry.parentId !== null) expect(ids.has(entry.parentId)).toBe(true);
  return stored;
}

describe('RuntimeState: a failed write in a group stops the later ones (never a checkpoint without its parent)', () => {
  it('async group: [A, B, C] with B failing stores A only, rejects C, and the next checkpoint names A', async () => {
    const { provider, state } = failingSetup(2);
    const outcomes = await Promise.allSettled([
      state.writeCheckpoint(),
      state.writeCheckpoint(),
      state.writeCheckpoint(),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect(String((outcomes[2] as PromiseRejectedResult).reason)).toContain('ENOSPC');
    const a = (outcomes[0] as PromiseFulfilledResult<StoredCheckpoint>).value;
    expect((await expectNoOrphans(provider)).map((entry) => entry.id)).toEqual([a.id]);
    expect(state.lineage.checkpointId).toBe(a.id);
    const next = await state.writeCheckpoint();
    expect(next.parentId).toBe(a.id);
    await expectNoOrphans(provider);
  });

  it('sync: queued [A, B] with B failing before a strict checkpoint: neither B nor the strict one is stored', async () => {
    const { provider, state } = failingSetup(2);
    const queued = [state.writeCheckpoint(), state.writeCheckpoint()];
    expect(() => state.writeCheckpointSync()).toThrow(/ENOSPC/);
    const outcomes = await Promise.allSettled(queued);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected']);
    const a = (outcomes[0] as PromiseFulfilledResult<StoredCheckpoint>).value;
    expect((await expectNoOrphans(provider)).map((entry) => entry.id)).toEqual([a.id]);
    expect(state.lineage.checkpointId).toBe(a.id);
    expect(state.writeCheckpointSync().parentId).toBe(a.id);
  });

  it('at exit (writePendingSync): [A, B, C] with B failing writes A only', async () => {
    const { provider, state } = failingSetup(2);
    for (let index = 0; index < 3; index += 1) void state.writeCheckpoint().catch(() => undefined);
    expect(state.writePendingSync()).toBe(1);
    await expectNoOrphans(provider);
    expect(await provider.list('mem')).toHaveLength(1);
  });
});

/** Fails its `failAt`-th async write after `delayMs` (a slow disk giving up); the others succeed. */
class SlowFailingProvider extends InMemoryProvider {
  writes = 0;
  #started: (() => void) | undefined;
  /** Resolves once the failing write has started (and is in flight). */
  readonly failing = new Promise<void>((resolve) => {
    this.#started = resolve;
  });
  constructor(
    readonly failAt: number,
    readonly delayMs: number,
  ) {
    super();
  }

  override async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    this.writes += 1;
    if (this.writes === this.failAt) {
      this.#started?.();
      await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
    }
    return super.write(location, checkpoint);
  }
}

/** A run whose second write fails after 30 ms, on an in-memory store. */
function slowlyFailingRun() {
  const provider = new SlowFailingProvider(2, 30);
  const state = new RuntimeState({
    provider,
    location: 'mem',
    entities: [new FakeCrew(2)],
    bus: new EventBus(),
  });
  return { provider, state };
}

describe('RuntimeState: a failed write stops the checkpoints queued behind it meanwhile', () => {
  it('B failing slowly while C (parent B) and D queue: neither lands, the next names A, one head', async () => {
    const { provider, state } = slowlyFailingRun();
    const a = await state.writeCheckpoint();
    const b = state.writeCheckpoint();
    await provider.failing;
    // B is in flight; the run goes on and queues C and D, which name B (then C) as their parent.
    const c = state.writeCheckpoint();
    const d = state.writeCheckpoint();
    const outcomes = await Promise.allSettled([b, c, d]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const outcome of outcomes)
      expect(String((outcome as PromiseRejectedResult).reason)).toContain('EIO');
    await state.settle();
    expect((await expectNoOrphans(provider)).map((entry) => entry.id)).toEqual([a.id]);
    expect(state.lineage.checkpointId).toBe(a.id);
    const next = await state.writeCheckpoint();
    expect(next.parentId).toBe(a.id);
    const stored = await expectNoOrphans(provider);
    const parents = new Set(stored.map((entry) => entry.parentId));
    expect(stored.filter((entry) => !parents.has(entry.id)).map((entry) => entry.id)).toEqual([next.id]);
  });

  it('a strict checkpoint taken after the failure names the last stored one', async () => {
    const { provider, state } = slowlyFailingRun();
    const a = await state.writeCheckpoint();
    const b = state.writeCheckpoint();
    await provider.failing;
    const c = state.writeCheckpoint();
    await Promise.allSettled([b, c]);
    expect(state.writeCheckpointSync().parentId).toBe(a.id);
    expect((await expectNoOrphans(provider)).length).toBe(2);
  });
});

/** A store that does not answer: every group gives up after the provider's time limit. */
class SilentStoreProvider extends GroupingProvider {
  constructor(private readonly extra: Record<string, unknown> = {}) {
    super();
  }

  override async writeBatch(): Promise<StoredCheckpoint[]> {
    this.calls.push(-1);
    throw new CrewlineError(
      'provider-postgres',
      'write_failed',
      'the server did not answer within 30000 ms',
      {
        details: { unreachable: true, timedOut: true, timeoutMs: 30_000, ...this.extra },
      },
    );
  }
}

describe('RuntimeState: a group the store did not answer in time', () => {
  // Written again one by one, the first write would wait out the same time limit in the same
  // outage: Ctrl+C during a silent outage took two limits to end instead of one.
  it('is not written again one by one: every checkpoint of it fails at once, the lineage back where it was', async () => {
    const provider = new SilentStoreProvider();
    const state = new RuntimeState({
      provider,
      location: 'mem',
      entities: [new FakeCrew(2)],
      bus: new EventBus(),
    });
    const outcomes = await Promise.allSettled([state.writeCheckpoint(), state.writeCheckpoint()]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(provider.calls).toEqual([-1]);
    expect(state.lineage.checkpointId).toBeNull();
  });

  // A store whose server answered the check on a new connection (only the group's connection was
  // lost): written again one by one, the checkpoints land.
  it('whose server answered a check is written again one by one', async () => {
    const provider = new SilentStoreProvider({ serverAnswered: true });
    const state = new RuntimeState({
      provider,
      location: 'mem',
      entities: [new FakeCrew(2)],
      bus: new EventBus(),
    });
    const outcomes = await Promise.allSettled([state.writeCheckpoint(), state.writeCheckpoint()]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(provider.calls).toEqual([-1, 1, 1]);
  });
});
