import { EventBus } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';
import { Flow, start } from './index.js';

const model = offlineModel({ name: 'shape' });
let taskCount = 2;

/** A flow whose one method kicks off a crew of `taskCount` tasks (its code "changes" between runs). */
class DraftFlow extends Flow<{ draft: string }> {
  initialState = { draft: '' };

  @start()
  async draft() {
    const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Clear', llm: model });
    const tasks = Array.from(
      { length: taskCount },
      (_, index) => new Task({ description: `Part ${index + 1}`, expectedOutput: 'text', agent: writer }),
    );
    const output = await new Crew({ name: 'draft-crew', agents: [writer], tasks }).kickoff({ bus: this.bus });
    this.state.draft = output.raw;
    return output.raw;
  }
}

describe('a crew inside a flow method whose code changed since the checkpoint', () => {
  it('is refused with advice for a flow: the method, and a checkpoint taken before it started', async () => {
    const provider = new InMemoryProvider();
    taskCount = 2;
    await new DraftFlow({ bus: new EventBus(), checkpoint: { location: 'mem', provider } }).kickoff();
    const midCrew = (await provider.list('mem')).find(
      (checkpoint) => checkpoint.trigger === 'task_completed',
    )!;
    taskCount = 3;
    const restored = await DraftFlow.fromCheckpoint(
      { restoreFrom: `mem#${midCrew.id}`, provider },
      { bus: new EventBus() },
    );
    const failure = await restored.kickoff().then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure?.message).toContain('flow method "draft"');
    expect(failure?.message).toContain('has 2 tasks but the crew it kicks off now has 3');
    expect(failure?.message).toContain('before "draft" started');
    expect(failure?.message).not.toContain('Crew.fromCheckpoint');
  });
});
