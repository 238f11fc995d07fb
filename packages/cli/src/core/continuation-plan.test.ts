import { continueFromCheckpoint, registerProject } from '@crewline/runtime';
import { captureLogs, offlineModel } from '@crewline/runtime/testing';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeInterruptedCrewRun } from '../test-support/interrupted-crew.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { planContinuation } from './continuation-plan.js';
import { type DocumentView, viewDocument } from './document-view.js';
import { openCheckpoint } from './open-location.js';
import { cliProviderRegistry } from './providers.js';

const model = offlineModel({ name: 'plan-interrupted' });
registerProject({ models: { 'plan-interrupted:model': model } });

describe('planContinuation of a crew interrupted mid-task', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let midTask: StoredCheckpoint;
  let view: DocumentView;
  const registry = cliProviderRegistry();

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-plan-');
    ({ midTask } = await writeInterruptedCrewRun(project.path, 'plan-interrupted:model'));
    view = viewDocument(
      (await openCheckpoint(midTask.reference, project.path, registry, undefined, 'crewline')).document,
    );
    expect(view.tasks.map((task) => task.status)).toEqual(['completed', 'running']);
  });
  afterAll(async () => {
    await registry.close();
    await project?.remove();
  });

  it('without changed inputs the interrupted task continues its saved conversation', () => {
    const continued = {
      number: 2,
      name: 'write',
      reason: 'continued',
      savedCalls: 1,
      note: 'continues its saved conversation; the 1 model call it had made is not made again',
    };
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
      runs: [
        expect.objectContaining({
          number: 2,
          name: 'write',
          reason: 'restarted',
          savedCalls: 1,
          note: 'starts over with the new inputs; the 1 model call it had made is made again',
        }),
      ],
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
