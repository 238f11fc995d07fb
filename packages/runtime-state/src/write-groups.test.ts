// How RuntimeState groups its async writes: the checkpoints a run queues one after another go to the
// provider as one group, so that the barrier before the next model call waits for one round of
// flushes, not for a lone write followed by the rest.
import { EventBus } from '@crewline/events';
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
