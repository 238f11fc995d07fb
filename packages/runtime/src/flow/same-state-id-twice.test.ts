import { EventBus } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Flow, start } from './index.js';

class Tally extends Flow<{ id: string; topic: string; words: number }> {
  initialState = { id: 'tally', topic: '', words: 0 };
  @start() async count() {
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.state.words = this.state.topic.length;
    return this.state.words;
  }
}

class Outer extends Flow<{ total: number }> {
  initialState = { total: 0 };
  @start() async both() {
    const results = await Promise.all(
      ['tides', 'volcanoes'].map((topic) => new Tally().kickoff({ inputs: { topic } })),
    );
    this.state.total = results.reduce((sum, result) => sum + result.state.words, 0);
    return this.state.total;
  }
}

class OuterSequential extends Flow<{ total: number }> {
  initialState = { total: 0 };
  @start() async both() {
    for (const topic of ['tides', 'volcanoes'])
      this.state.total += (await new Tally().kickoff({ inputs: { topic } })).state.words;
    return this.state.total;
  }
}

class Plain extends Flow<{ topic: string; words: number }> {
  initialState = { topic: '', words: 0 };
  @start() count() {
    this.state.words = this.state.topic.length;
    return this.state.words;
  }
}
class OuterInputsId extends Flow<{ total: number }> {
  initialState = { total: 0 };
  @start() async both() {
    // The same customer's record twice in one run, a new object each time, by inputs.id.
    for (const topic of ['tides', 'volcanoes'])
      this.state.total += (await new Plain().kickoff({ inputs: { id: 'customer-7', topic } })).state.words;
    return this.state.total;
  }
}

// Found by a review of a65b960: the second object joined the run under the state id the first held,
// and the run refused it ("two entities of one run have the id"); before, it was left out of every
// checkpoint. Each is now an entity of its own.
describe('two Flow objects with one state id, kicked off in one run', () => {
  it('by inputs.id, one after the other: both run', async () => {
    const result = await new OuterInputsId({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider: new InMemoryProvider() },
    }).kickoff();
    expect(result.state.total).toBe(14);
  });
  it('one after the other: both run', async () => {
    const result = await new OuterSequential({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider: new InMemoryProvider() },
    }).kickoff();
    expect(result.state.total).toBe(14);
  });
  it('both run (as one after the other does)', async () => {
    const result = await new Outer({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider: new InMemoryProvider() },
    }).kickoff();
    expect(result.state.total).toBe(14);
  });

  it('are two entities in every checkpoint, and a resume from any of them ends the same', async () => {
    const provider = new InMemoryProvider();
    await new OuterSequential({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    const checkpoints = await provider.list('mem');
    const last = checkpoints.at(-1)!;
    const tallies = last.entities.filter((entity) => entity.name === 'Tally');
    expect(tallies).toHaveLength(2);
    expect(new Set(tallies.map((entity) => entity.id)).size).toBe(2);
    for (const checkpoint of checkpoints) {
      const restored = await OuterSequential.fromCheckpoint(
        { restoreFrom: `mem#${checkpoint.id}`, provider },
        { bus: new EventBus() },
      );
      expect((await restored.kickoff()).state.total, checkpoint.trigger).toBe(14);
    }
  });
});
