import { describe, expect, it } from 'vitest';
import type { EntitySnapshot, EntitySummary } from './document.js';
import { readDocument } from './reference.js';
import type { CheckpointableEntity } from './run-entities.js';
import { RuntimeState } from './runtime-state.js';
import { InMemoryProvider } from './testing/in-memory-provider.js';

/** A crew-like entity kicked off more than once: a new id and topic for each kickoff. */
class LoopedCrew implements CheckpointableEntity {
  readonly entityKind = 'crew' as const;
  readonly entityName = 'topic-crew';
  entityId = 'kickoff-1';
  topic = 'tides';
  done = false;

  snapshotEntity(): EntitySnapshot {
    return {
      kind: 'crew',
      id: this.entityId,
      name: this.entityName,
      data: { topic: this.topic, done: this.done },
    };
  }

  summarizeEntity(): EntitySummary {
    return { kind: 'crew', id: this.entityId, name: this.entityName, completed: this.done ? 1 : 0, total: 1 };
  }
}

describe('RuntimeState.keepEarlierKickoff', () => {
  it('keeps the earlier kickoff as it ended, in its place, and the next kickoff as an entity of its own', async () => {
    const provider = new InMemoryProvider();
    const crew = new LoopedCrew();
    const other: CheckpointableEntity = {
      entityKind: 'agent',
      entityId: 'agent-1',
      entityName: 'Writer',
      snapshotEntity: () => ({ kind: 'agent', id: 'agent-1', name: 'Writer', data: {} }),
      summarizeEntity: () => ({ kind: 'agent', id: 'agent-1', name: 'Writer' }),
    };
    const state = new RuntimeState({ provider, location: 'mem', entities: [crew, other] });
    crew.done = true;

    expect(state.keepEarlierKickoff(crew)).toBe(true);
    crew.entityId = 'kickoff-2';
    crew.topic = 'volcanoes';
    crew.done = false;
    state.addEntity(crew);
    const reference = state.checkpoint();

    const document = await readDocument(provider, 'mem', reference.split('#')[1]!);
    expect(document.entities.map((entity) => [entity.id, entity.data])).toEqual([
      ['kickoff-1', { topic: 'tides', done: true }],
      ['agent-1', {}],
      ['kickoff-2', { topic: 'volcanoes', done: false }],
    ]);
    expect(document.metadata.entities.map((entity) => [entity.id, entity.completed])).toEqual([
      ['kickoff-1', 1],
      ['agent-1', undefined],
      ['kickoff-2', 0],
    ]);
  });

  it('is false for an entity that is not part of the run, and changes nothing', () => {
    const state = new RuntimeState({ provider: new InMemoryProvider(), location: 'mem' });
    const crew = new LoopedCrew();
    expect(state.keepEarlierKickoff(crew)).toBe(false);
    expect(state.entities).toEqual([]);
  });

  // Found by a review: a restored run carries what a completed method's kickoff saved under the live
  // object's id; kicked off again, the object kept that id and joined as nothing (addEntity dropped it).
  it('is true for an object whose id the run holds already (its saved earlier kickoff), which stays', () => {
    const crew = new LoopedCrew();
    const carried = new LoopedCrew();
    carried.done = true;
    const state = new RuntimeState({
      provider: new InMemoryProvider(),
      location: 'mem',
      entities: [carried],
    });
    expect(state.keepEarlierKickoff(crew)).toBe(true);
    expect(state.entities).toEqual([carried]);
  });
});

describe('RuntimeState.addEntity', () => {
  it('refuses a second object under an id the run holds, instead of leaving it out of every checkpoint', () => {
    const state = new RuntimeState({
      provider: new InMemoryProvider(),
      location: 'mem',
      entities: [new LoopedCrew()],
    });
    expect(() => state.addEntity(new LoopedCrew())).toThrow(
      /two entities of one run have the id "kickoff-1" \(crew "topic-crew" and crew "topic-crew"\)/,
    );
    const same = state.entities[0]!;
    state.addEntity(same);
    expect(state.entities).toHaveLength(1);
  });
});
