import { join } from 'node:path';
import { Agent, Crew, Task } from '@crewline/runtime';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planContinuation } from '../core/continuation-plan.js';
import { viewDocument } from '../core/document-view.js';
import { openCheckpoint } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { runCommand, temporaryDirectory } from '../test-support/run-command.js';

// The trial: plan and diff showed "Outline {topic}" although the run's inputs were known. Tasks
// without names, so that every view shows the description.
describe('task descriptions as the run used them', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let checkpoints: StoredCheckpoint[];
  const registry = cliProviderRegistry();
  const crewline = (...args: string[]) => runCommand(['checkpoint', ...args], { cwd: project.path });

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-descriptions-');
    const provider = await providerOf('json');
    const writer = new Agent({
      role: 'Writer',
      goal: 'Write',
      backstory: 'Plain',
      llm: 'offline:descriptions',
    });
    const crew = new Crew({
      name: 'Descriptions crew',
      agents: [writer],
      tasks: [
        new Task({ description: 'Outline {topic}', expectedOutput: 'Lines', agent: writer }),
        new Task({ description: 'Write on {topic} in {words} words', expectedOutput: 'Text', agent: writer }),
      ],
      checkpoint: { location: join(project.path, '.checkpoints'), provider, onEvents: ['task_completed'] },
    });
    await crew.kickoff({ inputs: { topic: 'tides', words: 200 } });
    checkpoints = [
      ...(await provider.list(provider.resolveLocation(join(project.path, '.checkpoints')))),
    ].sort((a, b) => a.eventCount - b.eventCount);
  });
  afterAll(async () => {
    await registry.close();
    await project?.remove();
  });

  it('info: filled with the inputs; --json keeps description as written (schema 1) and adds it as run', async () => {
    const info = await crewline('info', checkpoints[0]!.id);
    expect(info.stdout).toContain('Outline tides');
    expect(info.stdout).toContain('Write on tides in 200 words');
    expect(info.stdout).not.toContain('Outline {topic}');
    const json = JSON.parse((await crewline('info', checkpoints[0]!.id, '--json')).stdout);
    expect(json.tasks[1]).toMatchObject({
      description: 'Write on {topic} in {words} words',
      descriptionAsRun: 'Write on tides in 200 words',
    });
    expect(json.tasks[1]).not.toHaveProperty('descriptionTemplate');
  });

  it('diff: filled with the inputs; --json keeps description as written', async () => {
    const diff = await crewline('diff', checkpoints[0]!.id, checkpoints[1]!.id);
    expect(diff.stdout).toContain('Write on tides in 200 words');
    expect(diff.stdout).not.toContain('{topic}');
    const json = JSON.parse(
      (await crewline('diff', checkpoints[0]!.id, checkpoints[1]!.id, '--json')).stdout,
    );
    expect(json.tasks).toContainEqual(
      expect.objectContaining({
        description: 'Write on {topic} in {words} words',
        descriptionAsRun: 'Write on tides in 200 words',
      }),
    );
  });

  it('plan: filled with the inputs the continuation gives, else the saved ones', async () => {
    const view = viewDocument(
      (await openCheckpoint(checkpoints[0]!.reference, project.path, registry, undefined, 'crewline'))
        .document,
    );
    expect(planContinuation(view, undefined).runs.map((task) => task.description)).toEqual([
      'Write on tides in 200 words',
    ]);
    expect(
      planContinuation(view, undefined, { ...view.inputs, topic: 'reefs' }).runs.map(
        (task) => task.description,
      ),
    ).toEqual(['Write on reefs in 200 words']);
  });
});
