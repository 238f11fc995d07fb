import { type BaseEvent, EventBus } from '@crewline/events';
import { expect, it } from 'vitest';
import { RuntimeState } from './runtime-state.js';
import { InMemoryProvider } from './testing/in-memory-provider.js';

// Every event of a run goes to the bus it was given: the write lifecycle events as its fork events
// (review RB-2: after the split the writes' events followed the public `bus` getter, which a subclass
// may answer differently, while fork's went to the bus given).
it('a write reports to the bus the run was given, as a fork does, whatever its bus getter answers', async () => {
  const given = new EventBus();
  const other = new EventBus();
  const seen: string[] = [];
  given.onAny((_source: unknown, event: BaseEvent) => void seen.push(`given:${event.type}`));
  other.onAny((_source: unknown, event: BaseEvent) => void seen.push(`other:${event.type}`));
  class Routed extends RuntimeState {
    override get bus(): EventBus {
      return other;
    }
  }
  const state = new Routed({ provider: new InMemoryProvider(), location: 'memory', bus: given });
  state.checkpoint();
  state.checkpoint();
  await state.writeCheckpoint({ maxCheckpoints: 1 });
  await state.settle();
  state.fork('fork/a');
  await state.acheckpoint();
  expect(seen.filter((entry) => !entry.startsWith('given:'))).toEqual([]);
  expect(seen).toContain('given:checkpoint_started');
  expect(seen).toContain('given:checkpoint_completed');
  expect(seen).toContain('given:checkpoint_fork_started');
  expect(seen).toContain('given:checkpoint_pruned');
});
