import { EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { parseCrewData } from '@crewline/runtime-state/internal';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { readCheckpoint } from '../e2e/support/fixtures.js';
import { useTemporaryDirectory } from '../e2e/support/use-temporary-directory.js';
import { Flow, listen, start } from '../flow/index.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { Task } from '../task/task.js';
import { captureLogs, type LogCapture } from '../testing/capture-logs.js';
import { countCalls, type OfflineModel, offlineModel } from '../testing/index.js';
import { continueFromCheckpoint } from './continue-from-checkpoint.js';

const directory = useTemporaryDirectory();
let logs: LogCapture;
beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => logs.stop());

// The model the flow's crews call: a new one per run, so its calls are what that run paid.
// The second tasks answer later, so both first tasks complete before either second one.
const newModel = () => offlineModel({ latencyMs: (call) => (call.userText.includes(' two ') ? 30 : 0) });
let model: OfflineModel = newModel();

/** The calls made for a task (the context of a later task quotes it too, so by its own prompt). */
const paidFor = (task: string) =>
  countCalls(model, (call) => call.userText.startsWith(`Current task: ${task} on tides`));

async function runCrew(name: string): Promise<string> {
  const agent = new Agent({ role: `${name} writer`, goal: 'Write', backstory: 'Careful', llm: model });
  const tasks = ['one', 'two'].map(
    (step) => new Task({ description: `${name} ${step} on {topic}`, expectedOutput: 'short text', agent }),
  );
  return (await new Crew({ name, agents: [agent], tasks }).kickoff({ inputs: { topic: 'tides' } })).raw;
}

/** Two parallel methods, each running a crew of its own. */
class Parallel extends Flow<{ topic: string }> {
  initialState = { topic: 'tides' };

  @start() begin() {
    return 'go';
  }

  @listen('begin') async alpha() {
    return runCrew('ALPHA');
  }

  @listen('begin') async beta() {
    return runCrew('BETA');
  }
}

/** One method running two crews, one after the other: the second works on the first's output. */
class TwoCrews extends Flow<{ topic: string }> {
  initialState = { topic: 'tides' };

  @start() async write() {
    return `${await runCrew('ALPHA')}${await runCrew('BETA')}`;
  }
}

/** The checkpoint where each crew completed its first task and neither its second. */
async function bothFirstTasksDone(location: string): Promise<{ reference: string; alphaOne: number }> {
  await new Parallel({
    bus: new EventBus(),
    checkpoint: { location, onEvents: ['task_completed'] },
  }).kickoff();
  const provider = new JsonProvider();
  for (const checkpoint of await provider.list(provider.resolveLocation(location))) {
    const crews = readCheckpoint(checkpoint.reference).entities.filter((entity) => entity.kind === 'crew');
    const statuses = crews.map((crew) =>
      parseCrewData(crew).tasks.map((task) => task.status === 'completed'),
    );
    if (crews.length === 2 && statuses.every(([one, two]) => one && !two)) {
      return { reference: checkpoint.reference, alphaOne: crews[0]!.name === 'ALPHA' ? 0 : 2 };
    }
  }
  throw new Error('expected a checkpoint with both first tasks completed and neither second one');
}

describe("editing the output of a task of one parallel method's crew", () => {
  it("runs that crew's later task again, never the completed task of the other method's crew", async () => {
    const { reference, alphaOne } = await bothFirstTasksDone(directory.path);
    model = newModel();
    const result = await continueFromCheckpoint({
      reference,
      mode: 'fork',
      taskOutputs: { [alphaOne]: 'EDITED' },
      registry: new ProjectRegistry().register({ flows: { Parallel } }),
      bus: new EventBus(),
    });
    expect(result.kind).toBe('flow');
    // Paid: ALPHA's task after the edited one, and BETA's second task, which had not run yet.
    expect(paidFor('ALPHA two')).toBe(1);
    expect(paidFor('BETA two')).toBe(1);
    // Not paid again: the completed tasks, the edited one and BETA's first.
    expect(paidFor('ALPHA one')).toBe(0);
    expect(paidFor('BETA one')).toBe(0);
    // ALPHA's later task worked on the edited output.
    expect(
      model.calls.find((call) => call.userText.startsWith('Current task: ALPHA two'))?.userText,
    ).toContain('## ALPHA one on tides\nEDITED');
  });
});

describe("editing the output of a task of a method's first crew", () => {
  it('runs again the later crews the same method started', async () => {
    await new TwoCrews({
      bus: new EventBus(),
      checkpoint: { location: directory.path, onEvents: ['task_completed'] },
    }).kickoff();
    const provider = new JsonProvider();
    // Written as BETA's first task completed: ALPHA done, BETA half done, the method still running.
    const checkpoint = (await provider.list(provider.resolveLocation(directory.path)))[2]!;
    const crews = readCheckpoint(checkpoint.reference).entities.filter((entity) => entity.kind === 'crew');
    expect(crews.map((crew) => parseCrewData(crew).tasks.map((task) => task.status))).toEqual([
      ['completed', 'completed'],
      ['completed', 'pending'],
    ]);
    model = newModel();
    await continueFromCheckpoint({
      reference: checkpoint.reference,
      mode: 'fork',
      taskOutputs: { 0: 'EDITED' },
      registry: new ProjectRegistry().register({ flows: { TwoCrews } }),
      bus: new EventBus(),
    });
    expect(['ALPHA one', 'ALPHA two', 'BETA one', 'BETA two'].map(paidFor)).toEqual([0, 1, 1, 1]);
  });
});
