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
import { captureLogs, offlineModel } from '@crewline/runtime/testing';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerOf } from '../test-support/fixtures.js';
import { temporaryDirectory } from '../test-support/run-command.js';
import { checkBeforeRunning } from './check-before-running.js';
import { type PlannedTask, planContinuation } from './continuation-plan.js';
import { type DocumentView, viewDocument } from './document-view.js';
import { openCheckpoint } from './open-location.js';
import { cliProviderRegistry } from './providers.js';

// Found by a review: the plan compared the flow's kickoff inputs where the runtime compares what the
// flow's method passes its crew, and listed tasks of completed methods that a flow never runs again.

// The second tasks of the parallel methods answer later, so both first tasks complete before either.
const model = offlineModel({
  name: 'plan-flow',
  latencyMs: (call) => (/^Current task: (alpha|beta) two/.test(call.userText) ? 30 : 0),
});

/** A two-task crew whose prompts name `prefix`, so the calls made say which tasks ran. */
function crewOf(prefix: string): Crew {
  const writer = new Agent({
    role: 'Writer',
    goal: 'Write about {topic}',
    backstory: 'Plain',
    llm: 'plan-flow:model',
  });
  return new Crew({
    agents: [writer],
    tasks: [
      new Task({
        name: `${prefix}-1`,
        description: `${prefix} one {topic}`,
        expectedOutput: 'Lines',
        agent: writer,
      }),
      new Task({
        name: `${prefix}-2`,
        description: `${prefix} two {topic}`,
        expectedOutput: 'Lines',
        agent: writer,
      }),
    ],
  });
}

class PlanArticleFlow extends Flow<{ topic: string; audience: string; out: string }> {
  initialState = { topic: 'tides', audience: 'kids', out: '' };
  @start()
  async write() {
    // The crew gets only the topic: the audience is the flow's business.
    const output = await crewOf('article').kickoff({ inputs: { topic: this.state.topic }, bus: this.bus });
    this.state.out = output.raw;
    return output.raw;
  }
}

class PlanTwoStepFlow extends Flow<{ topic: string; out: string }> {
  initialState = { topic: 'tides', out: '' };
  @start()
  async research() {
    return (await crewOf('research').kickoff({ inputs: { topic: this.state.topic }, bus: this.bus })).raw;
  }
  @listen('research')
  async write(research: string) {
    this.state.out = (
      await crewOf('write').kickoff({ inputs: { topic: this.state.topic }, bus: this.bus })
    ).raw;
    return research + this.state.out;
  }
}
/** Two methods that run at the same time, each with a crew of its own. */
class PlanParallelFlow extends Flow<{ topic: string }> {
  initialState = { topic: 'tides' };
  @start()
  begin() {
    return 'go';
  }
  @listen('begin')
  async alpha() {
    return (await crewOf('alpha').kickoff({ inputs: { topic: this.state.topic }, bus: this.bus })).raw;
  }
  @listen('begin')
  async beta() {
    return (await crewOf('beta').kickoff({ inputs: { topic: this.state.topic }, bus: this.bus })).raw;
  }
}
registerProject({
  models: { 'plan-flow:model': model },
  flows: { PlanArticleFlow, PlanTwoStepFlow, PlanParallelFlow },
});

const registry = cliProviderRegistry();
let project: Awaited<ReturnType<typeof temporaryDirectory>>;
beforeAll(async () => {
  project = await temporaryDirectory('crewline-plan-flow-');
});
afterAll(async () => {
  await registry.close();
  await project?.remove();
});

/**
 * Runs a flow (`kickoff`) into its own location; returns the last checkpoint it wrote (checkpointing
 * on every model call, its last task mid-way), or the first with `which`.
 */
async function midTaskCheckpoint(
  name: string,
  kickoff: (location: string, provider: Awaited<ReturnType<typeof providerOf>>) => Promise<unknown>,
  which: 'first' | 'last' = 'last',
): Promise<{ checkpoint: StoredCheckpoint; view: DocumentView }> {
  const location = join(project.path, name);
  const provider = await providerOf('json');
  await kickoff(location, provider);
  const written = await provider.list(provider.resolveLocation(location));
  await provider.close?.();
  const checkpoint = [...written].sort((a, b) => a.eventCount - b.eventCount).at(which === 'first' ? 0 : -1)!;
  const view = viewDocument(
    (await openCheckpoint(checkpoint.reference, project.path, registry, undefined, 'crewline')).document,
  );
  return { checkpoint, view };
}

/** Forks `checkpoint` as the CLI does; returns the prompts of the model calls it made. */
async function forkPrompts(
  checkpoint: StoredCheckpoint,
  request: { inputs?: Record<string, unknown>; taskOutputs?: Record<number, string> },
): Promise<string[]> {
  const before = model.calls.length;
  const logs = captureLogs();
  await continueFromCheckpoint({
    reference: checkpoint.reference,
    mode: 'fork',
    providers: registry,
    ...request,
  }).finally(() => logs.stop({ allowUnexpected: true }));
  return model.calls
    .slice(before)
    .map((call) => JSON.stringify(call).match(/(article|research|write|alpha|beta) (one|two)/)?.[0] ?? '?');
}

/** Whether the calls a continuation made are ones the plan's reason allows. */
function callsAgree(task: PlannedTask, made: number): boolean {
  const saved = task.savedCalls ?? 0;
  if (task.reason === 'continued') return made === 0;
  if (task.reason === 'flow-decides') return made === 0 || made === saved;
  return made === saved;
}

describe('planContinuation of a flow whose crew was stopped mid-task', () => {
  const continued = {
    number: 2,
    name: 'article-2',
    reason: 'continued',
    savedCalls: 1,
    note: 'continues its saved conversation; the 1 model call it had made is not made again',
  };
  const flowDecides = {
    number: 2,
    name: 'article-2',
    reason: 'flow-decides',
    savedCalls: 1,
    note: 'continues its saved conversation unless the flow gives its crew other inputs, then starts over; the 1 model call it had made is made again',
  };

  it('says a task continues while the inputs change nothing of the flow state, and that the flow decides once they do', async () => {
    const { checkpoint, view } = await midTaskCheckpoint('article', (location, provider) =>
      new PlanArticleFlow({ checkpoint: { location, provider, onEvents: ['llm_call_completed'] } }).kickoff({
        inputs: { topic: 'tides', audience: 'kids' },
      }),
    );
    expect(view.tasks.map((task) => task.status)).toEqual(['completed', 'running']);
    const cases: [Record<string, unknown> | undefined, object, boolean, number][] = [
      [undefined, continued, false, 0],
      [{ topic: 'tides', audience: 'kids' }, continued, false, 0],
      // The audience changes the flow's state, not what its method gives the crew: it continues.
      [{ topic: 'tides', audience: 'adults' }, flowDecides, true, 0],
      // The topic reaches the crew's inputs: it starts over, its saved call made again.
      [{ topic: 'kelp', audience: 'kids' }, flowDecides, true, 1],
    ];
    for (const [inputs, planned, inputsChanged, callsMade] of cases) {
      const plan = planContinuation(view, undefined, inputs);
      expect(plan, JSON.stringify(inputs)).toEqual({
        edited: [],
        inputsChanged,
        runs: [expect.objectContaining(planned)],
        flow: expect.objectContaining({ completed: [], due: ['write'] }),
      });
      const prompts = await forkPrompts(checkpoint, inputs ? { inputs } : {});
      expect(prompts.length, JSON.stringify(inputs)).toBe(callsMade);
      expect(callsAgree(plan.runs[0]!, prompts.length)).toBe(true);
    }
  });

  it('a flow kicked off without inputs, given one equal to its state, continues the task', async () => {
    const { checkpoint, view } = await midTaskCheckpoint('article-no-inputs', (location, provider) =>
      new PlanArticleFlow({ checkpoint: { location, provider, onEvents: ['llm_call_completed'] } }).kickoff(),
    );
    expect(view.inputs).toEqual({});
    const plan = planContinuation(view, undefined, { topic: 'tides' });
    expect(plan).toEqual({
      edited: [],
      inputsChanged: false,
      runs: [expect.objectContaining(continued)],
      flow: expect.any(Object),
    });
    expect(await forkPrompts(checkpoint, { inputs: { topic: 'tides' } })).toEqual([]);
  });
});

describe('planContinuation of a flow with an edited task output', () => {
  let checkpoint: StoredCheckpoint;
  let view: DocumentView;
  beforeAll(async () => {
    ({ checkpoint, view } = await midTaskCheckpoint('two-step', (location, provider) =>
      new PlanTwoStepFlow({ checkpoint: { location, provider, onEvents: ['llm_call_completed'] } }).kickoff({
        inputs: { topic: 'tides' },
      }),
    ));
    expect(view.tasks.map((task) => [task.name, task.status])).toEqual([
      ['research-1', 'completed'],
      ['research-2', 'completed'],
      ['write-1', 'completed'],
      ['write-2', 'running'],
    ]);
  });

  it("refuses an edit of a completed method's task, naming rerunFrom: the flow keeps that method's crew and return value", async () => {
    // Found by a review: the edit marked the next method's tasks to run again, which they did on
    // unchanged inputs (2 model calls paid again), while the edited output reached nothing.
    const refusal =
      /task 1 \(research-1\) was run by a method of flow "PlanTwoStepFlow" that already completed \(completed: research\).*rerunFrom "research".*crewline checkpoint flows rerun \S+ --from research/;
    expect(() =>
      checkBeforeRunning(view.document, { mode: 'fork', taskOutputs: { 0: 'Other facts' } }),
    ).toThrow(refusal);
    const before = model.calls.length;
    await expect(forkPrompts(checkpoint, { taskOutputs: { 0: 'Other facts' } })).rejects.toThrow(refusal);
    expect(model.calls.length).toBe(before);
  });

  it('says which methods it keeps and which it runs', () => {
    expect(planContinuation(view, undefined, undefined).flow).toEqual({
      completed: ['research'],
      due: ['write'],
      paused: [],
      note: 'the flow keeps research as completed, runs write from the start, then the methods that listen to it; tasks of crews this checkpoint does not hold yet are not listed',
    });
  });

  it("an edit inside the unfinished method's crew runs the tasks after it", async () => {
    const plan = planContinuation(view, ['3=Other draft'], undefined);
    expect(plan.runs.map((task) => [task.number, task.reason])).toEqual([[4, 'invalidated']]);
    expect(await forkPrompts(checkpoint, { taskOutputs: { 2: 'Other draft' } })).toEqual(['write two']);
  });
});

describe('planContinuation of a flow stopped between two methods', () => {
  it('lists no task, and says the due method runs: its crew is not in the checkpoint yet', async () => {
    // The first checkpoint is written as research finishes: write is due and has not started.
    const { checkpoint, view } = await midTaskCheckpoint(
      'between-methods',
      (location, provider) =>
        new PlanTwoStepFlow({
          checkpoint: { location, provider, onEvents: ['method_execution_finished'] },
        }).kickoff({
          inputs: { topic: 'tides' },
        }),
      'first',
    );
    expect(view.tasks.map((task) => task.name)).toEqual(['research-1', 'research-2']);
    const plan = planContinuation(view, undefined, undefined);
    expect(plan.runs).toEqual([]);
    expect(plan.flow?.note).toBe(
      'the flow keeps research as completed, runs write from the start, then the methods that listen to it; tasks of crews this checkpoint does not hold yet are not listed',
    );
    expect(await forkPrompts(checkpoint, {})).toEqual(['write one', 'write two']);
  });
});

describe('planContinuation of a flow with an edited task of one of two parallel methods', () => {
  it("runs the later task of the edited crew, never the completed task of the other method's crew", async () => {
    // Found by a trial: the edit reset every task after it in the checkpoint's order, the completed
    // first task of the other method's crew included, which ran (and was paid) again while the plan
    // said only the edited crew's next task would.
    const location = join(project.path, 'parallel');
    const provider = await providerOf('json');
    await new PlanParallelFlow({ checkpoint: { location, provider, onEvents: ['task_completed'] } }).kickoff({
      inputs: { topic: 'tides' },
    });
    const written = await provider.list(provider.resolveLocation(location));
    await provider.close?.();
    const views = await Promise.all(
      written.map(async (checkpoint) => ({
        checkpoint,
        view: viewDocument(
          (await openCheckpoint(checkpoint.reference, project.path, registry, undefined, 'crewline'))
            .document,
        ),
      })),
    );
    const bothFirstDone = views.find(({ view }) =>
      view.tasks.every((task) => (task.status === 'completed') === task.name?.endsWith('-1')),
    );
    if (bothFirstDone === undefined) throw new Error('expected a checkpoint with both first tasks done');
    const { checkpoint, view } = bothFirstDone;
    expect(view.tasks.map((task) => task.name)).toEqual(['alpha-1', 'alpha-2', 'beta-1', 'beta-2']);
    const plan = planContinuation(view, ['1=Other facts'], undefined);
    expect(plan.runs.map((task) => task.name)).toEqual(['alpha-2', 'beta-2']);
    const prompts = await forkPrompts(checkpoint, { taskOutputs: { 0: 'Other facts' } });
    expect(prompts.sort()).toEqual(['alpha two', 'beta two']);
  });
});
