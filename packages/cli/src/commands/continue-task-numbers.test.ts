import { join } from 'node:path';
import { Agent, Crew, Flow, listen, registerProject, start, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

const model = offlineModel({ name: 'numbered-flow' });

async function runCrew(flow: Flow<object>, name: string, descriptions: string[]): Promise<string> {
  const agent = new Agent({
    role: `${name} agent`,
    goal: 'Work',
    backstory: 'Plain',
    llm: 'numbered-flow:model',
  });
  const tasks = descriptions.map((description) => new Task({ description, expectedOutput: 'Lines', agent }));
  return (await new Crew({ name, agents: [agent], tasks }).kickoff({ bus: flow.bus })).raw;
}

class NumberedFlow extends Flow<{ notes: string[] }> {
  initialState = { notes: [] as string[] };
  @start() async research() {
    return runCrew(this, 'research', ['Collect facts', 'Check facts']);
  }
  @listen('research') async alpha() {
    return runCrew(this, 'alpha', ['ALPHA one', 'ALPHA two']);
  }
  @listen('alpha') async polish() {
    return runCrew(this, 'polish', ['Polish it']);
  }
}
registerProject({ models: { 'numbered-flow:model': model }, flows: { NumberedFlow } });

// Trial 1127 B5: progress lines numbered tasks within their crew ("task 2 ALPHA two") while the
// plan, info and --set-output number them across the checkpoint ("task 4").
describe('progress lines of a resumed flow with several crews', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let alphaOneDone: StoredCheckpoint;
  const crewline = (...args: string[]) => runCommand(args, { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-task-numbers-');
    const location = join(project.path, '.checkpoints');
    const provider = await providerOf('json');
    await new NumberedFlow({ checkpoint: { location, provider, onEvents: ['task_completed'] } }).kickoff();
    const written = await provider.list(provider.resolveLocation(location));
    await provider.close?.();
    // The third task_completed: research's two tasks and ALPHA one.
    alphaOneDone = written[2]!;
  });
  afterAll(async () => {
    await project?.remove();
  });

  it('number tasks across the checkpoint, as info does, crews the checkpoint does not hold yet after them', async () => {
    const info = await crewline('checkpoint', 'info', alphaOneDone.reference);
    expect(info.stdout).toMatch(/ {2}4\. \[\w+\] +ALPHA two/);
    const result = await crewline('checkpoint', 'resume', alphaOneDone.reference);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/task 4 ALPHA two started/);
    expect(result.stdout).toMatch(/task 4 ALPHA two completed/);
    expect(result.stdout).toMatch(/task 5 Polish it started/);
    expect(result.stdout).not.toMatch(/task 2 ALPHA two|task 1 Polish/);
    const last = await crewline('checkpoint', 'info');
    expect(last.stdout).toMatch(/ {2}5\. \[done\] +Polish it/);
  });
});
