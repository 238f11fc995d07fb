import { EventBus } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { carriedTaskNumbers } from '../restore/saved-interrupted-tasks.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';
import { Flow, listen, start } from './index.js';

const model = offlineModel({ name: 'nested-flow-resume' });

afterEach(() => {
  model.reset();
});

/** Runs a crew of one agent; `name` undefined keeps the default name, as most crews do. */
async function runCrew(bus: EventBus, role: string, descriptions: string[], name?: string): Promise<string> {
  const agent = new Agent({ role, goal: `Be ${role}`, backstory: 'Plain', llm: model });
  const crew = new Crew({
    ...(name !== undefined ? { name } : {}),
    agents: [agent],
    tasks: descriptions.map((description) => new Task({ description, expectedOutput: 'text', agent })),
  });
  return (await crew.kickoff({ bus })).raw;
}

/** Its two crews share the default name: only their order tells them apart. */
class EssayFlow extends Flow<{ facts: string; essay: string }> {
  initialState = { facts: '', essay: '' };
  @start() async gather() {
    this.state.facts = await runCrew(this.bus, 'Gatherer', ['Gather facts A', 'Gather facts B']);
    return this.state.facts;
  }
  @listen('gather') async compose() {
    this.state.essay = await runCrew(this.bus, 'Composer', ['Compose part A', 'Compose part B']);
    return this.state.essay;
  }
}

class DelegatingFlow extends Flow<{ essay: string; done: boolean }> {
  initialState = { essay: '', done: false };
  @start() async delegate() {
    const result = await new EssayFlow().kickoff();
    this.state.essay = result.state.essay;
    return result.state.essay;
  }
  @listen('delegate') finish() {
    this.state.done = true;
    return 'ok';
  }
}

class NamedCrewsFlow extends Flow<{ essay: string }> {
  initialState = { essay: '' };
  @start() async gather() {
    await runCrew(this.bus, 'Gatherer', ['Gather facts A', 'Gather facts B'], 'gatherers');
    return 'gathered';
  }
  @listen('gather') async compose() {
    this.state.essay = await runCrew(this.bus, 'Composer', ['Compose part A', 'Compose part B'], 'composers');
    return 'composed';
  }
}

class DelegatingToNamedFlow extends Flow<{ essay: string }> {
  initialState = { essay: '' };
  @start() async delegate() {
    this.state.essay = (await new NamedCrewsFlow().kickoff()).state.essay;
    return 'delegated';
  }
}

describe('a flow kicked off in another flow method, resumed', () => {
  it('ends like the uninterrupted run from every checkpoint, paying no checkpointed model call again', async () => {
    const provider = new InMemoryProvider();
    const uninterrupted = await new DelegatingFlow({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    }).kickoff();
    expect(model.calls).toHaveLength(4);
    const failures: string[] = [];
    for (const [index, checkpoint] of (await provider.list('mem')).entries()) {
      const document = await readDocument(provider, 'mem', checkpoint.id);
      const paid = document.events.filter((event) => event.type === 'llm_call_completed').length;
      model.reset();
      const restored = await DelegatingFlow.fromCheckpoint(
        { restoreFrom: `mem#${checkpoint.id}`, provider },
        { bus: new EventBus() },
      );
      const resumed = await restored.kickoff();
      const at = `#${index} ${checkpoint.trigger} (${paid} calls paid)`;
      if (model.calls.length !== 4 - paid) failures.push(`${at}: ${model.calls.length} calls on resume`);
      if (resumed.state.essay !== uninterrupted.state.essay) failures.push(`${at}: another essay`);
    }
    expect(failures).toEqual([]);
  });

  it("keeps the crew of the inner flow's completed method in every checkpoint of the resumed run", async () => {
    const provider = new InMemoryProvider();
    const uninterrupted = await new DelegatingToNamedFlow({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['task_completed'] },
    }).kickoff();
    // Gatherers done (two tasks), composers one task in.
    const midCompose = (await provider.list('mem'))[2]!;
    const entityNames = ['DelegatingToNamedFlow', 'NamedCrewsFlow', 'gatherers', 'composers'];
    const before = await readDocument(provider, 'mem', midCompose.id);
    expect(before.entities.map((entity) => entity.name)).toEqual(entityNames);
    // What a continuation plan (the CLI's) says is kept as saved: the gatherers' two tasks.
    expect([...carriedTaskNumbers(before)]).toEqual([1, 2]);
    model.reset();
    const restored = await DelegatingToNamedFlow.fromCheckpoint(
      { restoreFrom: `mem#${midCompose.id}`, provider },
      { bus: new EventBus() },
    );
    const resumed = await restored.kickoff();
    expect(model.calls).toHaveLength(1);
    expect(resumed.state.essay).toBe(uninterrupted.state.essay);
    const last = (await provider.list('mem')).at(-1)!;
    const after = await readDocument(provider, 'mem', last.id);
    expect(after.entities.map((entity) => entity.name)).toEqual(entityNames);
  });
});
