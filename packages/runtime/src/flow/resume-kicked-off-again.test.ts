// Found by a review: a crew (or agent) kept on a flow, kicked off by a method that completed, then
// again after a pause, resumed on the same instance (flow.resume): the restored run carried the first
// kickoff's saved work under the object's id, so the second kickoff kept that id and was left out of
// every checkpoint, and a resume from one of them paid for its finished task again.
import { EventBus } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';
import { Flow, listen, start } from './index.js';

const model = offlineModel({ name: 'kicked-off-again-after-pause' });
afterEach(() => model.reset());

class AskThenReuse extends Flow<{ first: string; second: string }> {
  initialState = { first: '', second: '' };
  readonly crew = (() => {
    const agent = new Agent({ role: 'Editor', goal: 'Edit', backstory: 'Plain', llm: model });
    return new Crew({
      name: 'editors',
      agents: [agent],
      tasks: ['Edit draft {topic}', 'Proof draft {topic}'].map(
        (description) => new Task({ description, expectedOutput: 'text', agent }),
      ),
    });
  })();
  @start() async partOne() {
    this.state.first = (await this.crew.kickoff({ inputs: { topic: 'one' }, bus: this.bus })).raw;
    return 'one';
  }
  @listen('partOne') async partTwo() {
    await this.ask('Go on with part two?');
    this.state.second = (await this.crew.kickoff({ inputs: { topic: 'two' }, bus: this.bus })).raw;
    return 'two';
  }
}

describe('a crew kicked off again after a pause, resumed on the same instance', () => {
  it("checkpoints the second kickoff's progress, and a resume from it pays only what is left", async () => {
    const provider = new InMemoryProvider();
    const flow = new AskThenReuse({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['task_completed'] },
    });
    const paused = await flow.kickoff();
    expect(paused.status).toBe('paused');
    expect(model.calls).toHaveLength(2);
    const before = (await provider.list('mem')).length;
    await flow.resume('yes');
    expect(model.calls).toHaveLength(4);
    // After the checkpoint that records the answer, the second kickoff's first task completed.
    const written = (await provider.list('mem'))
      .slice(before)
      .filter((checkpoint) => checkpoint.trigger === 'task_completed');
    const midway = written[0]!;
    const document = await readDocument(provider, 'mem', midway.id);
    const crews = document.entities.filter((entity) => entity.kind === 'crew');
    // One completed kickoff (partOne) and one running kickoff (partTwo, 1 of 2 tasks).
    const statuses = crews.map((crew) => crew.data.status);

    model.reset();
    const restored = await AskThenReuse.fromCheckpoint(
      { restoreFrom: `mem#${midway.id}`, provider },
      { bus: new EventBus() },
    );
    const resumed = await restored.kickoff();
    expect(model.calls.map((call) => call.userText.match(/(Edit|Proof) draft \w+/)?.[0])).toEqual([
      'Proof draft two',
    ]);
    expect(resumed.state.second).toBe(flow.state.second);
    expect(statuses).toEqual(['completed', 'running']);
  });
});

class AskThenReuseAgent extends Flow<{ answers: string[] }> {
  initialState = { answers: [] as string[] };
  readonly agent = new Agent({ role: 'Translator', goal: 'Translate', backstory: 'Plain', llm: model });
  @start() async partOne() {
    this.state.answers.push((await this.agent.kickoff('Translate alpha', { bus: this.bus })).raw);
    return 'one';
  }
  @listen('partOne') async partTwo() {
    await this.ask('Go on?');
    this.state.answers.push((await this.agent.kickoff('Translate beta', { bus: this.bus })).raw);
    return 'two';
  }
}

describe('an agent kicked off again after a pause, resumed on the same instance', () => {
  it("keeps the second kickoff's agent in the resumed run's checkpoints", async () => {
    const provider = new InMemoryProvider();
    const flow = new AskThenReuseAgent({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['llm_call_completed'] },
    });
    await flow.kickoff();
    const before = (await provider.list('mem')).length;
    await flow.resume('yes');
    const written = (await provider.list('mem'))
      .slice(before)
      .filter((checkpoint) => checkpoint.trigger === 'llm_call_completed');
    const document = await readDocument(provider, 'mem', written[0]!.id);
    const agents = document.entities.filter((entity) => entity.kind === 'agent');
    // partOne's kickoff (kept) and partTwo's kickoff: two entities with ids of their own.
    expect(new Set(agents.map((agent) => agent.id)).size).toBe(2);
  });
});
