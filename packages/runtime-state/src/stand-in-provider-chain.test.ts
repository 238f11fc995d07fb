// A provider chosen from a location (SQLite for a `.db` file, Postgres for a URL) is a stand-in
// until its package is imported, then the real provider: a run meets both objects for one store (its
// own config's provider is the real one; a crew or agent setting resolved earlier, the stand-in).
// The run keeps the parent of its next checkpoint, its queue of background writes and its lease per
// provider object, so a write through the stand-in started a chain of its own (trial: a flow's crew
// with its own `.db` setting wrote a checkpoint naming no parent, after the run's others there).
import { EventBus, TaskStartedEvent } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { LazyProvider, readyProvider } from './lazy-provider.js';
import type { CheckpointWrite, StoredCheckpoint } from './provider.js';
import { RuntimeState } from './runtime-state.js';
import { FakeCrew } from './test-support/fake-crew.js';
import { InMemoryProvider } from './testing/in-memory-provider.js';

function standInFor(real: InMemoryProvider): LazyProvider {
  let imported = false;
  return new LazyProvider(
    'memory',
    async () => {
      imported = true;
      return real;
    },
    () => (imported ? real : undefined),
  );
}

function setup() {
  const real = new InMemoryProvider();
  const standIn = standInFor(real);
  const state = new RuntimeState({
    provider: real,
    location: 'store',
    entities: [new FakeCrew(2)],
    bus: new EventBus(),
  });
  let step = 0;
  const next = () => {
    step += 1;
    state.recordEvent(new TaskStartedEvent({ description: `task ${step}` }));
  };
  return { real, standIn, state, next };
}

describe('a run writing through the stand-in of its own provider, once imported', () => {
  it('names the checkpoint the real provider wrote as parent, and the other way round', async () => {
    const { real, standIn, state, next } = setup();
    expect(await readyProvider(standIn)).toBe(real);
    next();
    const first = state.writeCheckpointSync({ trigger: 'first' });
    next();
    const second = await state.writeCheckpoint({ provider: standIn, trigger: 'second' });
    next();
    const third = state.writeCheckpointSync({ trigger: 'third' });
    expect([first.parentId, second.parentId, third.parentId]).toEqual([null, first.id, second.id]);
    const stored = await real.list('store');
    expect(stored.map((checkpoint) => [checkpoint.trigger, checkpoint.parentId])).toEqual([
      ['first', null],
      ['second', first.id],
      ['third', second.id],
    ]);
  });

  it('goes on from what it wrote through the stand-in before the import ended', async () => {
    const { real, standIn, state, next } = setup();
    next();
    // Still being imported: queued, written once the import ends.
    const first = await state.writeCheckpoint({ provider: standIn, trigger: 'first' });
    expect(standIn.loaded).toBe(real);
    next();
    const second = await state.writeCheckpoint({ provider: standIn, trigger: 'second' });
    next();
    const third = state.writeCheckpointSync({ trigger: 'third' });
    expect([first.parentId, second.parentId, third.parentId]).toEqual([null, first.id, second.id]);
  });

  it('writes what it queued through the stand-in ahead of a synchronous write, in order', async () => {
    const written: string[] = [];
    const real = new (class extends InMemoryProvider {
      override writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
        written.push(checkpoint.metadata.trigger);
        return super.writeSync(location, checkpoint);
      }
    })();
    let imported = false;
    let finishImport = () => {};
    const gate = new Promise<void>((resolve) => {
      finishImport = resolve;
    });
    const standIn = new LazyProvider(
      'memory',
      async () => {
        await gate;
        return real;
      },
      () => (imported ? real : undefined),
    );
    const state = new RuntimeState({
      provider: real,
      location: 'store',
      entities: [new FakeCrew(2)],
      bus: new EventBus(),
    });
    state.recordEvent(new TaskStartedEvent({ description: 'one' }));
    const first = state.writeCheckpoint({ provider: standIn, trigger: 'first' });
    state.recordEvent(new TaskStartedEvent({ description: 'two' }));
    const second = state.writeCheckpoint({ provider: standIn, trigger: 'second' });
    // The import ends; before the queue goes on, a strict checkpoint is written synchronously.
    imported = true;
    state.recordEvent(new TaskStartedEvent({ description: 'three' }));
    const third = state.writeCheckpointSync({ trigger: 'third' });
    finishImport();
    const [one, two] = await Promise.all([first, second]);
    expect([one.parentId, two.parentId, third.parentId]).toEqual([null, one.id, two.id]);
    // Each parent on disk before its child (the first one, in flight already, once more when it ends).
    expect(written.slice(0, 3)).toEqual(['first', 'second', 'third']);
  });
});
