// Two resumers of one run's latest checkpoint (review finding, CRITICAL: a task paid twice): the first
// reads the latest, a second continues the run to its end, then the first kicks off. It used to find
// the checkpoint "not the latest of its run" and quietly continue on a new branch, running and paying
// for every remaining task again. A checkpoint that was the latest when read and was continued since
// is refused with a `conflict` (SPEC §8 fencing: exactly one continues); `onConflict: 'fork'` still
// branches off on request, and an older checkpoint named on purpose is still re-run on a new branch.
import { join } from 'node:path';
import { CrewlineError, type LogRecord, setLogSink } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { lookupTool, temporaryDirectory, threeTaskCrew, toolUsingModel } from '../e2e/support/fixtures.js';
import { Flow, listen, start } from '../flow/index.js';
import type { OfflineModel } from '../models/offline/offline-model.js';
import { registerProject } from '../project-config/project-config.js';

let directory: { path: string; cleanup: () => void };
let records: LogRecord[];
const providers: CheckpointProvider[] = [];
let failing = true;
// One model for the run and every restore (a restored agent rebuilds its model from the registry),
// so its calls are all the calls paid.
const model = toolUsingModel({
  name: 'continued-since-read',
  // A crew's second task; a standalone agent's answer after its tool call.
  failOn: (call) =>
    failing &&
    (JSON.stringify(call.messages).includes('Current task: Write') ||
      (JSON.stringify(call.messages).includes('about fencing') &&
        call.messages.some((message) => message.role === 'tool'))),
});

beforeEach(() => {
  failing = true;
  model.reset();
  registerProject({ tools: { lookup: lookupTool }, models: { 'offline:continued-since-read': () => model } });
  directory = temporaryDirectory();
  records = [];
  setLogSink((record) => records.push(record));
});

afterEach(async () => {
  setLogSink(null);
  for (const provider of providers.splice(0)) await provider.close?.();
  directory.cleanup();
});

const stores = {
  sqlite: { location: 'runs.db', make: () => new SqliteProvider() },
  json: { location: 'runs', make: () => new JsonProvider() },
};

/** The tasks the model was called for, in order (`Current task: <description>` of each call). */
function tasksCalled(model: OfflineModel): string[] {
  return model.calls.map((call) => JSON.stringify(call.messages).match(/Current task: (\w+)/)?.[1] ?? '?');
}

describe.each(['sqlite', 'json'] as const)('a latest checkpoint continued after it was read (%s)', (kind) => {
  /** A run stopped by a failure in its second task; `failing` turns the failure off for the resumes. */
  async function interruptedRun() {
    const location = join(directory.path, stores[kind].location);
    const provider = stores[kind].make();
    providers.push(provider);
    const crew = () => threeTaskCrew(model, { checkpoint: { location, provider } }).crew;
    await crew()
      .kickoff({ inputs: { topic: 'AI' } })
      .catch(() => undefined);
    failing = false;
    model.reset();
    return { location, provider, model, crew };
  }

  it.each([
    ['the latest (a bare location)', (location: string) => location],
    ['its id, while it was the latest', (location: string, headId: string) => `${location}#${headId}`],
  ])(
    'refuses the first resumer with a conflict when it named %s: no task paid twice',
    async (_, reference) => {
      const { location, provider, model, crew } = await interruptedRun();
      const head = (await provider.latest(provider.resolveLocation(location)))!;
      const first = await Crew.fromCheckpoint({
        restoreFrom: reference(location, head.id),
        location,
        provider,
      });
      await crew().kickoff({ fromCheckpoint: { restoreFrom: location, location, provider } });
      const paidBySecond = tasksCalled(model);
      expect(new Set(paidBySecond)).toEqual(new Set(['Write', 'Review']));
      const before = await provider.list(location);

      const refusal = await first.kickoff().then(
        () => undefined,
        (error: unknown) => error,
      );

      expect(CrewlineError.hasCode(refusal, 'conflict')).toBe(true);
      const error = refusal as CrewlineError;
      expect(error.details).toMatchObject({ checkpointId: head.id, continuedSinceRead: true });
      expect(error.details!.headId).toBe(before.at(-1)!.id);
      expect(error.message).toContain(`checkpoint ${head.id} was the latest of its run when it was read`);
      expect(error.message).toMatch(/Resume again .* or fork from/);
      expect(tasksCalled(model)).toEqual(paidBySecond);
      expect((await provider.list(location)).map((listed) => listed.id)).toEqual(
        before.map((listed) => listed.id),
      );
      expect(records.some((record) => record.message.includes('is not the latest of its run'))).toBe(false);
    },
  );

  it("branches off with onConflict: 'fork', as asked", async () => {
    const { location, provider, model, crew } = await interruptedRun();
    const first = await Crew.fromCheckpoint({
      restoreFrom: location,
      location,
      provider,
      onConflict: 'fork',
    });
    await crew().kickoff({ fromCheckpoint: { restoreFrom: location, location, provider } });
    model.reset();
    await first.kickoff();
    expect(tasksCalled(model).filter((task) => task === 'Review').length).toBeGreaterThan(0);
    expect(records.some((record) => record.message.includes('is not the latest of its run'))).toBe(true);
  });

  it('still re-runs an older checkpoint named on purpose on a new branch, with the warning', async () => {
    const { location, provider, model, crew } = await interruptedRun();
    const head = (await provider.latest(provider.resolveLocation(location)))!;
    await crew().kickoff({ fromCheckpoint: { restoreFrom: location, location, provider } });
    model.reset();
    const rerun = await Crew.fromCheckpoint({ restoreFrom: `${location}#${head.id}`, location, provider });
    await rerun.kickoff();
    expect(tasksCalled(model)).toContain('Write');
    expect(
      records.some((record) => record.message.includes(`checkpoint ${head.id} is not the latest of its run`)),
    ).toBe(true);
  });
});

describe('a standalone agent whose latest checkpoint was continued after it was read (sqlite)', () => {
  it('refuses the first resumer with a conflict', async () => {
    const location = join(directory.path, 'agent.db');
    const provider = new SqliteProvider();
    providers.push(provider);
    const agent = () =>
      new Agent({
        role: 'Researcher',
        goal: 'Research',
        backstory: 'Keen',
        llm: model,
        tools: [lookupTool],
        checkpoint: { location, provider, onEvents: ['*'] },
      });
    await agent()
      .kickoff('Find facts about fencing')
      .catch(() => undefined);
    failing = false;
    const first = await Agent.fromCheckpoint({ restoreFrom: location, location, provider });
    await (await Agent.fromCheckpoint({ restoreFrom: location, location, provider })).kickoff();
    const paid = model.calls.length;
    const refusal = await first.kickoff().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(CrewlineError.hasCode(refusal, 'conflict')).toBe(true);
    expect((refusal as CrewlineError).details).toMatchObject({ continuedSinceRead: true });
    expect(model.calls.length).toBe(paid);
  });
});

/** Methods run by {@link TwoSteps}, in order: what a flow's continuation pays for. */
const stepsRun: string[] = [];

class TwoSteps extends Flow<{ notes: string }> {
  initialState = { notes: '' };
  @start() gather() {
    stepsRun.push('gather');
    return 'facts';
  }
  @listen('gather') summarise(facts: string) {
    stepsRun.push('summarise');
    if (failing) throw new Error('summarise failed');
    this.state.notes = `summary of ${facts}`;
    return this.state.notes;
  }
}

describe('a flow whose latest checkpoint was continued after it was read (sqlite)', () => {
  it('refuses the first resumer with a conflict: its remaining method runs once', async () => {
    const location = join(directory.path, 'flow.db');
    const provider = new SqliteProvider();
    providers.push(provider);
    stepsRun.length = 0;
    const checkpoint = { location, provider, onEvents: ['method_execution_finished' as const] };
    await new TwoSteps({ checkpoint }).kickoff().catch(() => undefined);
    failing = false;
    const first = await TwoSteps.fromCheckpoint({ restoreFrom: location, location, provider });
    await (await TwoSteps.fromCheckpoint({ restoreFrom: location, location, provider })).kickoff();
    expect(stepsRun).toEqual(['gather', 'summarise', 'summarise']);
    const refusal = await first.kickoff().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(CrewlineError.hasCode(refusal, 'conflict')).toBe(true);
    expect((refusal as CrewlineError).details).toMatchObject({ continuedSinceRead: true });
    expect(stepsRun).toEqual(['gather', 'summarise', 'summarise']);
  });
});
