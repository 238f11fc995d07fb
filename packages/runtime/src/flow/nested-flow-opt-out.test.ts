// `checkpoint: false` opts an entity out and stops inheritance (Crew, Agent and Flow alike): a flow
// kicked off in a method of a flow that checkpoints on '*' with `checkpoint: false` has its events
// checkpointed by nobody, as a crew or an agent with `checkpoint: false` has.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { Flow, persist, start } from './index.js';

const root = mkdtempSync(join(tmpdir(), 'crewline-nested-opt-out-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

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

  it('names in its result the checkpoint of its end when it inherits, none with checkpoint: false', async () => {
    // JSON files are written in the background: the run stores them after the inner kickoff returned.
    const location = join(root, 'results');
    const results: (string | undefined)[] = [];
    class Parent extends Flow<{ done: boolean }> {
      initialState = { done: false };
      @start() async delegate() {
        results.push((await new Inner({ checkpoint: false }).kickoff()).checkpoint);
        results.push((await new Inner().kickoff()).checkpoint);
        this.state.done = true;
        return 'delegated';
      }
    }
    await new Parent({ bus: new EventBus(), checkpoint: { location, onEvents: ['*'] } }).kickoff();
    const json = new JsonProvider();
    const checkpoints = await json.list(json.resolveLocation(location));
    const innerEnd = checkpoints.find((checkpoint) => checkpoint.trigger === 'flow_finished')!;
    // The opted-out kickoff wrote nothing: the parent's checkpoints written meanwhile are not its own.
    expect(results).toEqual([undefined, innerEnd.reference]);
  });
});
