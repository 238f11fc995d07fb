import { join } from 'node:path';
import {
  Agent,
  Crew,
  continueFromCheckpoint,
  Flow,
  listen,
  registerProject,
  start,
  Task,
} from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import { expect, it } from 'vitest';
import { providerOf } from '../../test-support/fixtures.js';
import { temporaryDirectory } from '../../test-support/run-command.js';
import { progressText } from './panels.js';

const model = offlineModel({ name: 'progress-flow' });
const agent = (role: string) =>
  new Agent({ role, goal: 'Write about {topic}', backstory: 'Plain', llm: 'progress-flow:model' });

/** The trial's flow: a 3-task crew, a standalone agent, a 2-task crew, one method each. */
class ProgressFlow extends Flow<{ topic: string }> {
  initialState = { topic: 'tides' };
  @start() async research() {
    const writer = agent('Writer');
    const tasks = [1, 2, 3].map(
      (n) => new Task({ name: `step ${n}`, description: `Step ${n}`, expectedOutput: 'x', agent: writer }),
    );
    return (await new Crew({ name: 'research', agents: [writer], tasks }).kickoff()).raw;
  }
  @listen('research') async summary() {
    return (await agent('Summarizer').kickoff('Sum it up')).raw;
  }
  @listen('summary') async publish() {
    const editor = agent('Editor');
    const tasks = [1, 2].map(
      (n) => new Task({ name: `part ${n}`, description: `Part ${n}`, expectedOutput: 'x', agent: editor }),
    );
    return (await new Crew({ name: 'publish', agents: [editor], tasks }).kickoff()).raw;
  }
}
registerProject({ models: { 'progress-flow:model': model }, flows: { ProgressFlow } });

// The trial: after a resume, the TUI's tree said 4/7 -> 4/6 -> 4/7 on neighbouring checkpoints (the
// method_execution_started checkpoint is written before the flow's crew rejoins it, and the total
// summed every entity's).
it("a resumed flow's checkpoints keep one total: the flow's methods", async () => {
  const project = await temporaryDirectory('crewline-progress-');
  try {
    const location = join(project.path, '.checkpoints');
    const provider = await providerOf('json');
    await new ProgressFlow({ checkpoint: { location, provider, onEvents: '*' } }).kickoff();
    const resolved = provider.resolveLocation(location);
    const byEvents = async () =>
      [...(await provider.list(resolved))].sort((a, b) => a.eventCount - b.eventCount);
    const first = await byEvents();
    // Stopped after the research crew's second task: what follows is gone, as after a crash.
    const stop = first.findIndex(
      (checkpoint) =>
        checkpoint.trigger === 'task_completed' &&
        checkpoint.entities.some((entity) => entity.name === 'research' && entity.completed === 2),
    );
    for (const checkpoint of first.slice(stop + 1)) await provider.delete(resolved, checkpoint.id);
    await continueFromCheckpoint({ reference: `${resolved}#${first[stop]!.id}`, mode: 'resume' });
    const resumed = (await byEvents()).slice(stop);
    // The trial's shape was a checkpoint of the resumed run holding the flow alone, its neighbours the
    // crew too; since the saved crew stays in place until it rejoins (b243627), every one holds it.
    expect(resumed.every((checkpoint) => checkpoint.entities.length > 1)).toBe(true);
    const totals = resumed.map((checkpoint) => progressText(checkpoint).text.split('/')[1]);
    expect(new Set(totals)).toEqual(new Set(['3']));
    const texts = resumed.map((checkpoint) => progressText(checkpoint).text);
    expect(texts.at(0)).toBe('0/3');
    expect(texts.at(-1)).toBe('3/3');
    expect(progressText(resumed.at(-1)!).complete).toBe(true);
    await provider.close?.();
  } finally {
    await project.remove();
  }
});
