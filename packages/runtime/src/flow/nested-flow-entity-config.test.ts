// A crew or agent without a checkpoint setting of its own, kicked off in a method of a flow that was
// itself kicked off in another flow's method, follows that nearest flow's setting (Task → Agent →
// Crew → Flow): with `checkpoint: false` on the nested flow nothing of it is checkpointed, and with a
// config of its own its crews' events go where that config says, not under the outer flow's '*'.
// The run names only a flow's own events with the flow: the crew's and agent's events fell back to
// the root's setting.
import { EventBus } from '@crewline/events';
import type { CheckpointSetting } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';
import { Flow, start } from './index.js';

const model = offlineModel({ name: 'nested-entity-config' });

afterEach(() => {
  model.reset();
});

/** The parent's own events, all its '*' writes when nothing nested is checkpointed under it. */
const parentOnly = ['flow_started', 'method_execution_started', 'method_execution_finished', 'flow_finished'];

/** A two-task crew, with its own setting when given one. */
function writingCrew(checkpoint?: CheckpointSetting): Crew {
  const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Clear', llm: model });
  return new Crew({
    name: 'writers',
    agents: [writer],
    tasks: [1, 2].map(
      (index) => new Task({ description: `Part ${index}`, expectedOutput: 'text', agent: writer }),
    ),
    ...(checkpoint !== undefined ? { checkpoint } : {}),
  });
}

/** A standalone agent's kickoff, with its own setting when given one. */
async function agentAnswers(checkpoint?: CheckpointSetting): Promise<void> {
  const agent = new Agent({
    role: 'Helper',
    goal: 'Answer',
    backstory: 'Brief',
    llm: model,
    ...(checkpoint !== undefined ? { checkpoint } : {}),
  });
  await agent.kickoff('Say something');
}

/** A flow whose one method does `work`, kicked off with `setting` in a method of a parent flow. */
function nestedIn(setting: CheckpointSetting, work: () => Promise<unknown>) {
  class Inner extends Flow<{ done: boolean }> {
    initialState = { done: false };
    @start() async work() {
      await work();
      this.state.done = true;
      return 'worked';
    }
  }
  class Parent extends Flow<{ innerDone: boolean }> {
    initialState = { innerDone: false };
    @start() async delegate() {
      const inner = new Inner(setting === undefined ? {} : { checkpoint: setting });
      this.state.innerDone = (await inner.kickoff()).state.done;
      return 'delegated';
    }
  }
  return Parent;
}

/** Runs the parent with '*' into a store of its own; the triggers written there. */
async function parentTriggers(Parent: ReturnType<typeof nestedIn>): Promise<string[]> {
  const provider = new InMemoryProvider();
  const result = await new Parent({
    bus: new EventBus(),
    checkpoint: { location: 'mem', provider, onEvents: ['*'] },
  }).kickoff();
  expect(result.state.innerDone).toBe(true);
  return (await provider.list('mem')).map((checkpoint) => checkpoint.trigger);
}

const triggersAt = async (provider: InMemoryProvider, location: string) =>
  (await provider.list(location)).map((checkpoint) => checkpoint.trigger);

describe("in a flow with checkpoint: false, kicked off in a method of a flow checkpointing on '*'", () => {
  it('a crew without a setting is not checkpointed', async () => {
    const triggers = await parentTriggers(nestedIn(false, () => writingCrew().kickoff()));
    expect(triggers).toEqual(parentOnly);
  });

  it('a standalone agent without a setting is not checkpointed', async () => {
    const triggers = await parentTriggers(nestedIn(false, () => agentAnswers()));
    expect(triggers).toEqual(parentOnly);
  });

  it('a flow without a setting, created and kicked off in its method, is not checkpointed', async () => {
    class Innermost extends Flow<{ steps: number }> {
      initialState = { steps: 0 };
      @start() step() {
        this.state.steps += 1;
        return 'stepped';
      }
    }
    const triggers = await parentTriggers(nestedIn(false, () => new Innermost().kickoff()));
    expect(triggers).toEqual(parentOnly);
  });

  it('a crew with a config of its own is checkpointed there', async () => {
    const crewStore = new InMemoryProvider();
    const crewConfig = { location: 'crew', provider: crewStore, onEvents: ['task_completed' as const] };
    const triggers = await parentTriggers(nestedIn(false, () => writingCrew(crewConfig).kickoff()));
    expect(triggers).toEqual(parentOnly);
    expect(await triggersAt(crewStore, 'crew')).toEqual(['task_completed', 'task_completed']);
  });
});

describe("in a flow with a config of its own, kicked off in a method of a flow checkpointing on '*'", () => {
  const innerConfig = (provider: InMemoryProvider) => ({
    location: 'inner',
    provider,
    onEvents: ['task_completed' as const, 'lite_agent_execution_completed' as const],
  });

  it("a crew without a setting is checkpointed under that config, not under the parent's", async () => {
    const innerStore = new InMemoryProvider();
    const triggers = await parentTriggers(nestedIn(innerConfig(innerStore), () => writingCrew().kickoff()));
    expect(triggers).toEqual(parentOnly);
    expect(await triggersAt(innerStore, 'inner')).toEqual(['task_completed', 'task_completed']);
  });

  it("a standalone agent without a setting is checkpointed under that config, not under the parent's", async () => {
    const innerStore = new InMemoryProvider();
    const triggers = await parentTriggers(nestedIn(innerConfig(innerStore), () => agentAnswers()));
    expect(triggers).toEqual(parentOnly);
    expect(await triggersAt(innerStore, 'inner')).toEqual(['lite_agent_execution_completed']);
  });

  it('a crew with a config of its own is checkpointed there', async () => {
    const innerStore = new InMemoryProvider();
    const crewStore = new InMemoryProvider();
    const crewConfig = {
      location: 'crew',
      provider: crewStore,
      onEvents: ['crew_kickoff_completed' as const],
    };
    const triggers = await parentTriggers(
      nestedIn(innerConfig(innerStore), () => writingCrew(crewConfig).kickoff()),
    );
    expect(triggers).toEqual(parentOnly);
    expect(await triggersAt(innerStore, 'inner')).toEqual([]);
    expect(await triggersAt(crewStore, 'crew')).toEqual(['crew_kickoff_completed']);
  });
});

describe("in a flow without a setting, kicked off in a method of a flow checkpointing on '*'", () => {
  it("a crew without a setting inherits the parent's '*', as the flow does", async () => {
    const triggers = await parentTriggers(nestedIn(undefined, () => writingCrew().kickoff()));
    expect(triggers).toContain('crew_kickoff_started');
    expect(triggers.filter((trigger) => trigger === 'task_completed')).toHaveLength(2);
    expect(triggers.filter((trigger) => trigger === 'flow_finished')).toHaveLength(2);
  });
});

describe("in the method of a flow checkpointing on '*' (no nesting)", () => {
  it("a crew without a setting is checkpointed under the flow's '*'", async () => {
    const provider = new InMemoryProvider();
    class Root extends Flow<{ raw: string }> {
      initialState = { raw: '' };
      @start() async write() {
        this.state.raw = (await writingCrew().kickoff()).raw;
        return this.state.raw;
      }
    }
    await new Root({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    }).kickoff();
    const triggers = await triggersAt(provider, 'mem');
    expect(triggers).toContain('crew_kickoff_started');
    expect(triggers.filter((trigger) => trigger === 'task_completed')).toHaveLength(2);
  });

  it('a crew with checkpoint: false is not checkpointed', async () => {
    const provider = new InMemoryProvider();
    class Root extends Flow<{ raw: string }> {
      initialState = { raw: '' };
      @start() async write() {
        this.state.raw = (await writingCrew(false).kickoff()).raw;
        return this.state.raw;
      }
    }
    await new Root({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    }).kickoff();
    expect(await triggersAt(provider, 'mem')).toEqual(parentOnly);
  });
});
