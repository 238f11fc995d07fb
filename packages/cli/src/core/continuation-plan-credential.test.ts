// A credential saved as [REDACTED] and given again changes no input; it starts an interrupted task
// over only when the saved conversation holds that text. The plan said it as "starts over with the
// new inputs" (and inputsChanged: true), the runtime's warning as "with the changed inputs it starts
// over": nothing had changed. Now both give the runtime's cause and words.
import { join } from 'node:path';
import { Agent, Crew, continueFromCheckpoint, registerProject, Task } from '@crewline/runtime';
import { captureLogs, offlineModel } from '@crewline/runtime/testing';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { planContinuation } from './continuation-plan.js';
import { type DocumentView, viewDocument } from './document-view.js';
import { openCheckpoint } from './open-location.js';
import { cliProviderRegistry } from './providers.js';

const model = offlineModel({ name: 'plan-credential' });
registerProject({ models: { 'plan-credential:model': model } });
const secret = 'sk-live-0123456789abcdefghij';

describe('planContinuation of a crew interrupted in a task whose prompt took a credential', () => {
  let project: Awaited<ReturnType<typeof temporaryDirectory>>;
  let midTask: StoredCheckpoint;
  let view: DocumentView;
  const registry = cliProviderRegistry();

  beforeAll(async () => {
    project = await temporaryDirectory('crewline-plan-credential-');
    const location = join(project.path, '.checkpoints');
    const provider = await providerOf('json');
    const writer = new Agent({
      role: 'Writer',
      goal: 'Write',
      backstory: 'Plain',
      llm: 'plan-credential:model',
    });
    await new Crew({
      name: 'Keyed crew',
      agents: [writer],
      tasks: [
        new Task({ name: 'outline', description: 'Outline {topic}', expectedOutput: 'Lines', agent: writer }),
        new Task({
          name: 'write',
          description: 'Write on {topic} with key {apiKey}',
          expectedOutput: 'Lines',
          agent: writer,
        }),
      ],
      checkpoint: { location, provider, onEvents: ['llm_call_completed'] },
    }).kickoff({ inputs: { topic: 'tides', apiKey: secret } });
    const written = await provider.list(provider.resolveLocation(location));
    await provider.close?.();
    midTask = [...written].sort((a, b) => a.eventCount - b.eventCount).at(-1)!;
    view = viewDocument(
      (await openCheckpoint(midTask.reference, project.path, registry, undefined, 'crewline')).document,
    );
    expect(view.tasks.map((task) => task.status)).toEqual(['completed', 'running']);
  });
  afterAll(async () => {
    await registry.close();
    await project?.remove();
  });

  it('says the task starts over to send the credential its conversation holds as [REDACTED], no input changed', () => {
    expect(planContinuation(view, undefined, { topic: 'tides', apiKey: secret })).toEqual({
      edited: [],
      inputsChanged: false,
      runs: [
        expect.objectContaining({
          number: 2,
          reason: 'restarted',
          restartCause: 'credential-given-again',
          savedCalls: 1,
          note: 'starts over to send the model the credential given again, which its saved conversation holds as [REDACTED]; the 1 model call it had made is made again',
        }),
      ],
    });
    // A changed input is said as before, and wins over the credential.
    expect(planContinuation(view, undefined, { topic: 'kelp', apiKey: secret })).toEqual({
      edited: [],
      inputsChanged: true,
      runs: [
        expect.objectContaining({
          reason: 'restarted',
          restartCause: 'changed-inputs',
          note: 'starts over with the new inputs; the 1 model call it had made is made again',
        }),
      ],
    });
  });

  it('agrees with the real continuation, whose warning says the same cause', async () => {
    const planned = planContinuation(view, undefined, { apiKey: secret }).runs[0]!;
    const before = model.calls.length;
    const logs = captureLogs();
    try {
      await continueFromCheckpoint({
        reference: midTask.reference,
        mode: 'fork',
        inputs: { apiKey: secret },
        providers: registry,
      });
      logs.expect(
        'Crew "Keyed crew" kickoff: task 2 "write" was interrupted; its saved conversation holds a credential as [REDACTED], so with the credential given again it starts over to send the model the real one instead of continuing that conversation; the 1 model call it had made is made again',
      );
      expect(logs.unexpected()).toEqual([]);
    } finally {
      logs.stop({ allowUnexpected: true });
    }
    expect(model.calls.length - before).toBe(planned.savedCalls);
    expect(JSON.stringify(model.calls.slice(before))).toContain(`with key ${secret}`);
  });
});
