import { describe, expect, it } from 'vitest';
import type { EntityKind } from './document.js';
import type { CheckpointableEntity } from './run-entities.js';
import { RuntimeState } from './runtime-state.js';

/** An entity whose snapshot says which object it is (`label`). */
function entity(kind: EntityKind, id: string, label: string, standIn?: boolean): CheckpointableEntity {
  return {
    entityKind: kind,
    entityId: id,
    entityName: 'writer',
    ...(standIn === undefined ? {} : { standIn }),
    snapshotEntity: () => ({ kind, id, name: 'writer', data: { label } }),
    summarizeEntity: () => ({ kind, id, name: 'writer' }),
  };
}

const labels = (state: RuntimeState) =>
  state.snapshot().entities.map((snapshot) => `${snapshot.id}:${(snapshot.data as { label: string }).label}`);

describe('RuntimeState.addEntity with stand-ins', () => {
  it('puts the entity joining under a stand-in id in its place, in saved order', () => {
    const state = new RuntimeState({ entities: [entity('flow', 'root', 'flow')] });
    state.addEntity(entity('crew', 'crew-1', 'saved one', true));
    state.addEntity(entity('crew', 'crew-2', 'saved two', true));
    state.addEntity(entity('crew', 'crew-3', 'new'));
    state.addEntity(entity('crew', 'crew-2', 'taken up'));
    expect(labels(state)).toEqual(['root:flow', 'crew-1:saved one', 'crew-2:taken up', 'crew-3:new']);
  });

  it('still refuses a second object under one id once the stand-in was replaced, and a second stand-in', () => {
    const state = new RuntimeState({ entities: [entity('crew', 'crew-1', 'saved', true)] });
    expect(() => state.addEntity(entity('crew', 'crew-1', 'another saved', true))).toThrow(/two entities/);
    state.addEntity(entity('crew', 'crew-1', 'taken up'));
    expect(() => state.addEntity(entity('crew', 'crew-1', 'copy'))).toThrow(
      /two entities of one run have the id "crew-1"/,
    );
    expect(labels(state)).toEqual(['crew-1:taken up']);
  });
});
