import { join } from 'node:path';
import { Agent, Crew, Flow, registerProject, start, Task } from '@crewline/runtime';
import { captureLogs, offlineModel } from '@crewline/runtime/testing';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

const model = offlineModel({ name: 'heading-flow' });

class HeadingFlow extends Flow<{ topic: string; audience: string }> {
  initialState = { topic: 'tides', audience: 'kids' };
  @start()
  async write() {
    const writer = new Agent({
      role: 'Writer',
      goal: 'Write about {topic}',
      backstory: 'Plain',
      llm: 'heading-flow:model',
    });
    const crew = new Crew({
      agents: [writer],
      tasks: [
        new Task({ name: 'outline', description: 'Outline {topic}', expectedOutput: 'Lines', agent: writer }),
        new Task({ name: 'draft', description: 'Draft on {topic}', expectedOutput: 'Lines', agent: writer }),
      ],
    });
    // The crew gets only the topic: the audience is the flow's business.
    return (await crew.kickoff({ inputs: { topic: this.state.topic }, bus: this.bus })).raw;
  }
}
registerProject({ models: { 'heading-flow:model': model }, flows: { HeadingFlow } });

describe('resume and fork of a flow whose crew was stopped mid-task', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let midTask: StoredCheckpoint;
  const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-flow-heading-');
    const location = join(project.path, '.checkpoints');
    const provider = await providerOf('json');
    await new HeadingFlow({ checkpoint: { location, provider, onEvents: ['llm_call_completed'] } }).kickoff({
      inputs: { topic: 'tides', audience: 'kids' },
    });
    const written = await provider.list(provider.resolveLocation(location));
    await provider.close?.();
    midTask = [...written].sort((a, b) => a.eventCount - b.eventCount).at(-1)!;
  });
  afterAll(async () => {
    await project?.remove();
  });

  it('says the flow decides whether a changed input starts the task over, and what the flow runs', async () => {
    const logs = captureLogs();
    const before = model.calls.length;
    const result = await crewline(
      'checkpoint',
      'fork',
      midTask.reference,
      '--input',
      'audience=adults',
    ).finally(() => logs.stop({ allowUnexpected: true }));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      '  task 2 draft continues its saved conversation unless the flow gives its crew other inputs, then starts over; the 1 model call it had made is made again\n',
    );
    expect(result.stdout).toContain(
      '  the flow runs write from the start, then the methods that listen to it; tasks of crews this checkpoint does not hold yet are not listed\n',
    );
    // This flow gives its crew only the topic: the task continued.
    expect(model.calls.length - before).toBe(0);
  });
});
