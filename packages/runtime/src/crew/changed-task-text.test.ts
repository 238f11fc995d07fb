import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';
import { captureLogs, type LogCapture } from '../testing/capture-logs.js';
import { Crew } from './crew.js';

let logs: LogCapture | undefined;
afterEach(() => logs?.stop());

function pipeline(model: ReturnType<typeof offlineModel>, provider: InMemoryProvider, second: string): Crew {
  const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Clear', llm: model });
  return new Crew({
    name: 'pipeline',
    agents: [writer],
    tasks: [
      new Task({ description: 'Outline the report', expectedOutput: 'lines', agent: writer }),
      new Task({ description: second, expectedOutput: 'text', agent: writer }),
      new Task({ description: 'Title the report', expectedOutput: 'title', agent: writer }),
    ],
    checkpoint: { location: 'mem', provider },
  });
}

describe("a task's text changed between a run and its resume", () => {
  // Trial (flows, second) 4: the saved output of the old prompt was kept and later tasks ran with
  // the new one, without a word.
  it('is warned about, naming the task, when it has saved work; the work is kept', async () => {
    const provider = new InMemoryProvider();
    const model = offlineModel();
    await pipeline(model, provider, 'Draft the report').kickoff();
    const afterTwo = (await provider.list('mem'))[1]!;
    model.reset();
    logs = captureLogs();

    const edited = pipeline(model, provider, 'Draft the report in French');
    await edited.kickoff({ fromCheckpoint: { restoreFrom: `mem#${afterTwo.id}`, provider } });

    const [warning] = logs.expect('changed since the checkpoint');
    expect(warning?.message).toContain(
      'task 2 (now "Draft the report in French", saved as "Draft the report")',
    );
    expect(warning?.message).not.toContain('task 1');
    // Only the third task ran: the second's saved output was kept.
    expect(model.calls).toHaveLength(1);
    logs.expect('is not the latest of its run');
  });

  it('says nothing when only tasks without saved work changed', async () => {
    const provider = new InMemoryProvider();
    const model = offlineModel();
    await pipeline(model, provider, 'Draft the report').kickoff();
    const afterOne = (await provider.list('mem'))[0]!;
    logs = captureLogs();
    await pipeline(model, provider, 'Draft the report in French').kickoff({
      fromCheckpoint: { restoreFrom: `mem#${afterOne.id}`, provider },
    });
    logs.expect('is not the latest of its run');
    expect(logs.unexpected()).toEqual([]);
  });

  // A review: a checkpoint stores texts with their secret-shaped parts redacted, so an unchanged
  // description holding one read as changed on every resume.
  it('says nothing for unchanged texts whose secret-shaped parts the checkpoint redacted', async () => {
    const provider = new InMemoryProvider();
    const model = offlineModel();
    const guide = () => {
      const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Clear', llm: model });
      return new Crew({
        name: 'guide',
        agents: [writer],
        tasks: [
          new Task({
            description: 'Write the setup step: put API_KEY=your-key-here in .env',
            expectedOutput: 'text',
            agent: writer,
          }),
          new Task({
            description: 'Write the connection step for postgres://app:changeme@db/app',
            expectedOutput: 'text',
            agent: writer,
          }),
          new Task({ description: 'Title the guide', expectedOutput: 'title', agent: writer }),
        ],
        checkpoint: { location: 'mem', provider },
      });
    };
    await guide().kickoff();
    const afterTwo = (await provider.list('mem'))[1]!;
    model.reset();
    logs = captureLogs();
    await guide().kickoff({ fromCheckpoint: { restoreFrom: `mem#${afterTwo.id}`, provider } });
    expect(model.calls).toHaveLength(1);
    logs.expect('is not the latest of its run');
    expect(logs.unexpected().map((record) => record.message)).toEqual([]);
  });
});
