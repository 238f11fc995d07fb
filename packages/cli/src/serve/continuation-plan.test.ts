import { join } from 'node:path';
import { Agent, Crew, continueFromCheckpoint, registerProject, Task } from '@crewline/runtime';
import { captureLogs, offlineModel } from '@crewline/runtime/testing';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DocumentView, viewDocument } from '../core/document-view.js';
import { openCheckpoint } from '../core/open-location.js';
import { cliProviderRegistry } from '../core/providers.js';
import { providerOf } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { planContinuation } from './continuation-plan.js';

const model = offlineModel({ name: 'plan-interrupted' });
registerProject({ models: { 'plan-interrupted:model': model } });

describe('planContinuation of a crew interrupted mid-task', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let midTask: StoredCheckpoint;
  let view: DocumentView;
  const registry = cliProviderRegistry();

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-plan-');
    const location = join(project.path, '.checkpoints');
    const provider = await providerOf('json');
    const writer = new Agent({
      role: 'Writer',
      goal: 'Write about {topic}',
      backstory: 'Plain',
      llm: 'plan-interrupted:model',
    });
    const crew = new Crew({
      name: 'Interrupted crew',
      agents: [writer],
      tasks: [
        new Task({ name: 'outline', description: 'Outline {topic}', expectedOutput: 'Lines', agent: writer }),
        new Task({ name: 'write', description: 'Write on {topic}', expectedOutput: 'Lines', agent: writer }),
      ],
      // Written after each model answer and before its task completes: the task is in progress there.
      checkpoint: { location, provider, onEvents: ['llm_call_completed'] },
    });
    await crew.kickoff({ inputs: { topic: 'tides' } });
    const written = await provider.list(provider.resolveLocation(location));
    await provider.close?.();
    // The last one: task 1 completed, task 2 stopped after its model call, as a crash there leaves it.
    midTask = [...written].sort((a, b) => a.eventCount - b.eventCount).at(-1)!;
    view = viewDocument((await openCheckpoint(midTask.reference, project.path, registry)).document);
    expect(view.tasks.map((task) => task.status)).toEqual(['completed', 'running']);
  });
  afterAll(async () => {
    await registry.close();
    await project?.remove();
  });

  it('without changed inputs the interrupted task continues its saved conversation', () => {
    const continued = { number: 2, name: 'write', reason: 'continued', savedCalls: 1 };
    for (const inputs of [undefined, { topic: 'tides' }]) {
      expect(planContinuation(view, undefined, inputs)).toEqual({
        edited: [],
        inputsChanged: false,
        runs: [expect.objectContaining(continued)],
      });
    }
  });

  it('with changed inputs it starts over, and says how many of its model calls are made again', () => {
    expect(planContinuation(view, undefined, { topic: 'kelp' })).toEqual({
      edited: [],
      inputsChanged: true,
      runs: [expect.objectContaining({ number: 2, name: 'write', reason: 'restarted', savedCalls: 1 })],
    });
  });

  it('an edited earlier output drops the saved conversation: the task runs again, its calls made again', () => {
    const plan = planContinuation(view, ['1=Another outline'], undefined);
    expect(plan.edited).toEqual([1]);
    expect(plan.runs).toEqual([expect.objectContaining({ number: 2, reason: 'invalidated', savedCalls: 1 })]);
  });

  it('agrees with the real continuation: the calls it says are made again are the calls made', async () => {
    for (const [inputs, callsMade] of [
      [{ topic: 'tides' }, 0],
      [{ topic: 'kelp' }, 1],
    ] as const) {
      const planned = planContinuation(view, undefined, inputs).runs[0]!;
      const before = model.calls.length;
      const logs = captureLogs();
      await continueFromCheckpoint({
        reference: midTask.reference,
        mode: 'fork',
        inputs,
        providers: registry,
      }).finally(() => logs.stop({ allowUnexpected: true }));
      expect(planned.reason === 'restarted' ? planned.savedCalls : 0).toBe(model.calls.length - before);
      expect(model.calls.length - before).toBe(callsMade);
    }
  });
});
