// A run that writes to two locations (a crew's and an agent's own setting) keeps a chain in each: a
// checkpoint names the run's previous checkpoint in its own location, so retention sees it continued
// there and incremental stores share events with a parent they hold. Before, the parent was the
// run's last checkpoint wherever it went, and a failure in one location stopped the other's writes.
import { EventBus, TaskStartedEvent } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import type { CheckpointWrite, StoredCheckpoint } from '../provider.js';
import { readDocument } from '../reference.js';
import { RuntimeState } from '../runtime-state.js';
import { FakeCrew } from '../test-support/fake-crew.js';
import { InMemoryProvider } from '../testing/in-memory-provider.js';

/** The in-memory provider, recording what each write shares with its parent, failing where told. */
class RecordingProvider extends InMemoryProvider {
  readonly writes: { location: string; id: string; parentId: string | null; parentEventCount: number }[] = [];
  /** Locations whose writes fail. */
  readonly failing = new Set<string>();

  override writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    if (this.failing.has(location)) throw new Error(`disk full at ${location}`);
    const { id, parentId } = checkpoint.metadata;
    this.writes.push({ location, id, parentId, parentEventCount: checkpoint.parentEventCount });
    return super.writeSync(location, checkpoint);
  }
}

function setup() {
  const provider = new RecordingProvider();
  const bus = new EventBus();
  const crew = new FakeCrew(3);
  const state = new RuntimeState({ provider, location: 'crew', entities: [crew], bus });
  return { provider, crew, state };
}

/** Adds one event to the run's history, as a triggering event would. */
function step(state: RuntimeState, index: number): void {
  state.recordEvent(new TaskStartedEvent({ description: `task ${index}` }));
}

describe('a run writing to two locations', () => {
  it('chains the checkpoints of each location to their own, sharing the events of that parent', async () => {
    const { provider, state } = setup();
    for (let index = 0; index < 6; index += 1) {
      step(state, index);
      state.writeCheckpointSync({ location: index % 2 === 0 ? 'crew' : 'agent' });
    }
    for (const location of ['crew', 'agent']) {
      const written = provider.writes.filter((write) => write.location === location);
      expect(written.map((write) => write.parentId)).toEqual([null, written[0]!.id, written[1]!.id]);
      const listed = await provider.list(location);
      const eventCountOf = new Map(listed.map((entry) => [entry.id, entry.eventCount]));
      // Each write shares with its parent exactly the events that parent holds.
      expect(written.map((write) => write.parentEventCount)).toEqual(
        written.map((write) => (write.parentId === null ? 0 : eventCountOf.get(write.parentId))),
      );
    }
    expect(state.lineage.checkpointId).toBe(provider.writes.at(-1)!.id);
  });

  it('keeps each location to maxCheckpoints', async () => {
    const { provider, state } = setup();
    for (let index = 0; index < 12; index += 1) {
      step(state, index);
      state.writeCheckpointSync({ location: index % 2 === 0 ? 'crew' : 'agent', maxCheckpoints: 2 });
    }
    await state.settle();
    expect((await provider.list('crew')).length).toBe(2);
    expect((await provider.list('agent')).length).toBe(2);
  });

  it('a resumed run names the checkpoint it came from as the parent of its first write in each location', async () => {
    const { provider, state } = setup();
    step(state, 0);
    state.writeCheckpointSync({ location: 'agent' });
    const origin = state.writeCheckpointSync({ location: 'agent' });
    const document = await readDocument(provider, 'agent', origin.id);
    const resumed = RuntimeState.fromDocument(document, {
      provider,
      location: 'crew',
      entities: [new FakeCrew(3)],
      bus: new EventBus(),
    });
    step(resumed, 1);
    const inCrew = resumed.writeCheckpointSync({ location: 'crew' });
    const inAgent = resumed.writeCheckpointSync({ location: 'agent' });
    const againInCrew = resumed.writeCheckpointSync({ location: 'crew' });
    expect([inCrew.parentId, inAgent.parentId, againInCrew.parentId]).toEqual([
      origin.id,
      origin.id,
      inCrew.id,
    ]);
    const firstInCrew = provider.writes.find((write) => write.id === inCrew.id)!;
    expect(firstInCrew.parentEventCount).toBe(document.events.length);
  });

  it('a failed write goes back in its own location only', async () => {
    const { provider, state } = setup();
    const crewFirst = state.writeCheckpointSync({ location: 'crew' });
    const agentFirst = state.writeCheckpointSync({ location: 'agent' });
    provider.failing.add('agent');
    expect(() => state.writeCheckpointSync({ location: 'agent' })).toThrow(/disk full/);
    expect(state.lineage.checkpointId).toBe(agentFirst.id);
    provider.failing.clear();
    const crewSecond = state.writeCheckpointSync({ location: 'crew' });
    const agentSecond = state.writeCheckpointSync({ location: 'agent' });
    expect(crewSecond.parentId).toBe(crewFirst.id);
    expect(agentSecond.parentId).toBe(agentFirst.id);
  });

  it("a background write failing in one location does not drop the other location's queued checkpoints", async () => {
    const { provider, state } = setup();
    provider.failing.add('agent');
    const outcomes = await Promise.allSettled([
      state.writeCheckpoint({ location: 'crew' }),
      state.writeCheckpoint({ location: 'agent' }),
      state.writeCheckpoint({ location: 'crew' }),
      state.writeCheckpoint({ location: 'agent' }),
      state.writeCheckpoint({ location: 'crew' }),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    const stored = await provider.list('crew');
    expect(stored.map((entry) => entry.parentId)).toEqual([null, stored[0]!.id, stored[1]!.id]);
  });

  it("writePendingSync: a failure at exit skips its own chain, not the other location's checkpoints", async () => {
    const { provider, state } = setup();
    provider.failing.add('agent');
    const queued = [
      state.writeCheckpoint({ location: 'agent' }),
      state.writeCheckpoint({ location: 'crew' }),
      state.writeCheckpoint({ location: 'agent' }),
      state.writeCheckpoint({ location: 'crew' }),
    ];
    for (const write of queued) write.catch(() => undefined);
    // The process is exiting before the queue started: everything queued is written synchronously.
    expect(state.writePendingSync()).toBe(2);
    const stored = await provider.list('crew');
    expect(stored.map((entry) => entry.parentId)).toEqual([null, stored[0]!.id]);
    expect(provider.writes.filter((write) => write.location === 'agent')).toEqual([]);
  });
});
