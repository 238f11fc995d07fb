// A crew inside a flow, interrupted in a task whose prompt took a credential (saved as [REDACTED]):
// the plan says what the run does, whether the flow's method hands its crew the key from the flow's
// state or from outside it. Review RC-4: a method handing the key from a closure (the environment),
// the plan said "continues … not made again" and the crew started over, paying again; with another
// state field changed it said "unless the flow gives its crew other inputs", though the crew started
// over for the credential. RC-3: the same with the key in the state, given again with a change.
import { join } from 'node:path';
import { Agent, Crew, continueFromCheckpoint, Flow, registerProject, start, Task } from '@crewline/runtime';
import { captureLogs, offlineModel } from '@crewline/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { planContinuation } from './continuation-plan.js';
import { type DocumentView, viewDocument } from './document-view.js';
import { openCheckpoint } from './open-location.js';
import { cliProviderRegistry } from './providers.js';

const secret = 'sk-live-0123456789abcdefghij';
const model = offlineModel({ name: 'plan-flow-credential' });

function keyedCrew(): Crew {
  const writer = new Agent({
    role: 'Writer',
    goal: 'Write',
    backstory: 'Plain',
    llm: 'plan-flow-credential:model',
  });
  return new Crew({
    agents: [writer],
    tasks: [
      new Task({ name: 'one', description: 'one {topic}', expectedOutput: 'Lines', agent: writer }),
      new Task({
        name: 'two',
        description: 'two {topic} key {apiKey}',
        expectedOutput: 'Lines',
        agent: writer,
      }),
    ],
  });
}

/** Hands its crew the key from outside its state, as a closure over the environment would. */
class OutsideKeyFlow extends Flow<{ topic: string; audience: string }> {
  initialState = { topic: 'tides', audience: 'kids' };
  @start()
  async write() {
    return (await keyedCrew().kickoff({ inputs: { topic: this.state.topic, apiKey: secret }, bus: this.bus }))
      .raw;
  }
}

/** Hands its crew the key its state holds. */
class StateKeyFlow extends Flow<{ topic: string; apiKey: string; audience: string }> {
  initialState = { topic: 'tides', apiKey: '', audience: 'kids' };
  @start()
  async write() {
    const inputs = { topic: this.state.topic, apiKey: this.state.apiKey };
    return (await keyedCrew().kickoff({ inputs, bus: this.bus })).raw;
  }
}

registerProject({ models: { 'plan-flow-credential:model': model }, flows: { OutsideKeyFlow, StateKeyFlow } });
const registry = cliProviderRegistry();
let project: Awaited<ReturnType<typeof temporaryDirectory>>;
beforeAll(async () => {
  project = await temporaryDirectory('crewline-plan-flow-credential-');
});
afterAll(async () => {
  await registry.close();
  await project?.remove();
});

/** The last checkpoint of a run of `flow`, in its second task after its first call. */
async function interrupted(
  name: string,
  flow: (checkpoint: {
    location: string;
    provider: Awaited<ReturnType<typeof providerOf>>;
  }) => Promise<unknown>,
): Promise<{ reference: string; view: DocumentView }> {
  const location = join(project.path, name);
  const provider = await providerOf('json');
  await flow({ location, provider });
  const written = await provider.list(provider.resolveLocation(location));
  await provider.close?.();
  const { reference } = [...written].sort((a, b) => a.eventCount - b.eventCount).at(-1)!;
  const view = viewDocument(
    (await openCheckpoint(reference, project.path, registry, undefined, 'crewline')).document,
  );
  expect(view.tasks.map((task) => task.status)).toEqual(['completed', 'running']);
  return { reference, view };
}

/** Forks with `inputs`: the calls made and the warnings of interrupted tasks. */
async function fork(
  reference: string,
  inputs: Record<string, unknown>,
): Promise<{ calls: number; warnings: string[] }> {
  const before = model.calls.length;
  const logs = captureLogs();
  try {
    await continueFromCheckpoint({ reference, mode: 'fork', inputs, providers: registry });
    const warnings = logs.records
      .filter((record) => record.level === 'warn' && record.message.includes('was interrupted'))
      .map((record) => record.message);
    return { calls: model.calls.length - before, warnings };
  } finally {
    logs.stop({ allowUnexpected: true });
  }
}

const startsOverForCredential =
  'its saved conversation holds a credential as [REDACTED], so with the credential given again it starts over';

describe('the plan of a flow whose crew took a credential, against the run', () => {
  it('a key from outside the state: the crew may start over, not "continued"', async () => {
    const { reference, view } = await interrupted('outside', (checkpoint) =>
      new OutsideKeyFlow({ checkpoint: { ...checkpoint, onEvents: ['llm_call_completed'] } }).kickoff({
        inputs: { topic: 'tides', audience: 'kids' },
      }),
    );
    const plan = planContinuation(view, undefined, {});
    expect(plan.runs.map((task) => [task.reason, task.restartCause, task.note])).toEqual([
      [
        'flow-decides',
        'credential-given-again',
        'continues its saved conversation unless the flow gives its crew a credential again that this conversation holds as [REDACTED]; then it starts over to send the model the real one; the 1 model call it had made is made again',
      ],
    ]);
    expect(plan.inputsChanged).toBe(false);
    // The run: the method gives the key again, the task starts over: its saved call is made again
    // (continued, it would make none: the checkpoint holds its answer).
    const run = await fork(reference, {});
    expect(run.calls).toBe(1);
    expect(run.warnings).toHaveLength(1);
    expect(run.warnings[0]).toContain(startsOverForCredential);

    const changed = planContinuation(view, undefined, { audience: 'adults' });
    expect(changed.runs.map((task) => [task.reason, task.restartCause, task.note])).toEqual([
      [
        'flow-decides',
        'changed-inputs',
        'continues its saved conversation unless the flow gives its crew other inputs, or a credential again that this conversation holds as [REDACTED]; then it starts over; the 1 model call it had made is made again',
      ],
    ]);
    expect(changed.inputsChanged).toBe(true);
    expect((await fork(reference, { audience: 'adults' })).warnings[0]).toContain(startsOverForCredential);
  });

  it('a key from the state, given again with a change the crew never sees: both causes said', async () => {
    const { reference, view } = await interrupted('state', (checkpoint) =>
      new StateKeyFlow({ checkpoint: { ...checkpoint, onEvents: ['llm_call_completed'] } }).kickoff({
        inputs: { topic: 'tides', apiKey: secret, audience: 'kids' },
      }),
    );
    const again = planContinuation(view, undefined, { apiKey: secret });
    expect(again.runs.map((task) => [task.reason, task.restartCause])).toEqual([
      ['flow-decides', 'credential-given-again'],
    ]);
    const inputs = { apiKey: secret, audience: 'adults' };
    const changed = planContinuation(view, undefined, inputs);
    expect(changed.runs.map((task) => [task.reason, task.restartCause, task.note])).toEqual([
      [
        'flow-decides',
        'changed-inputs',
        'continues its saved conversation unless the flow gives its crew other inputs, or a credential again that this conversation holds as [REDACTED]; then it starts over; the 1 model call it had made is made again',
      ],
    ]);
    const run = await fork(reference, inputs);
    expect(run.calls).toBe(1);
    expect(run.warnings[0]).toContain(startsOverForCredential);
  });
});
