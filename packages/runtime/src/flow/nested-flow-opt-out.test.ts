// `checkpoint: false` opts an entity out and stops inheritance (Crew, Agent and Flow alike): a flow
// kicked off in a method of a flow that checkpoints on '*' with `checkpoint: false` has its events
// checkpointed by nobody, as a crew or an agent with `checkpoint: false` has.
import { EventBus } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Flow, persist, start } from './index.js';

class Inner extends Flow<{ steps: number }> {
  initialState = { steps: 0 };
  @start() step() {
    this.state.steps += 1;
    return 'stepped';
  }
}

function parentOf(inner: () => Inner) {
  class Parent extends Flow<{ innerSteps: number }> {
    initialState = { innerSteps: 0 };
    @start() async delegate() {
      this.state.innerSteps = (await inner().kickoff()).state.steps;
      return 'delegated';
    }
  }
  return Parent;
}

async function triggersOf(inner: () => Inner): Promise<string[]> {
  const provider = new InMemoryProvider();
  const Parent = parentOf(inner);
  const result = await new Parent({
    bus: new EventBus(),
    checkpoint: { location: 'mem', provider, onEvents: ['*'] },
  }).kickoff();
  expect(result.state.innerSteps).toBe(1);
  return (await provider.list('mem')).map((checkpoint) => checkpoint.trigger);
}

describe("a flow kicked off in a method of a flow checkpointing on '*'", () => {
  it('inherits the setting: its events are checkpointed', async () => {
    const triggers = await triggersOf(() => new Inner());
    expect(triggers.filter((trigger) => trigger === 'flow_finished')).toHaveLength(2);
  });

  it('with checkpoint: false, is not checkpointed: only the parent is', async () => {
    const triggers = await triggersOf(() => new Inner({ checkpoint: false }));
    expect(triggers).toEqual([
      'flow_started',
      'method_execution_started',
      'method_execution_finished',
      'flow_finished',
    ]);
  });

  it('with checkpoint: false and @persist, is saved by its @persist saves alone, once each', async () => {
    const provider = new InMemoryProvider();
    @persist({ location: 'mem', provider })
    class PersistedInner extends Inner {}
    const Parent = parentOf(() => new PersistedInner({ checkpoint: false }));
    await new Parent({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    }).kickoff();
    const checkpoints = await provider.list('mem');
    expect(checkpoints.map((checkpoint) => checkpoint.trigger)).toEqual([
      'flow_started',
      'method_execution_started',
      // The inner flow's one method, saved by @persist.
      'method_execution_finished',
      'method_execution_finished',
      'flow_finished',
    ]);
  });
});
