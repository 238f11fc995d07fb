// One Crew object kicked off more than once in one run: each kickoff is an entity of its own in the
// checkpoint, and a resume hands the n-th kickoff the n-th kickoff's saved work.
import { EventBus } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Flow, listen, start } from '../flow/index.js';
import { Task } from '../task/task.js';
import { captureLogs, type LogCapture, offlineModel } from '../testing/index.js';
import { Crew } from './crew.js';

const model = offlineModel({ name: 'crew-kicked-off-again' });

// Each resume starts from a checkpoint its run went past: it continues on a new branch, and says so.
const olderWarning = 'is not the latest of its run';
let logs: LogCapture;

beforeEach(() => {
  logs = captureLogs();
});

afterEach(() => {
  model.reset();
  logs.stop();
});

function twoTaskCrew(name: string, verbs: [string, string], restoreKey?: string): Crew {
  const agent = new Agent({ role: 'Researcher', goal: 'Research', backstory: 'Keen', llm: model });
  return new Crew({
    name,
    agents: [agent],
    tasks: verbs.map((verb) => new Task({ description: `${verb} {topic}`, expectedOutput: 'notes', agent })),
    ...(restoreKey !== undefined ? { restoreKey } : {}),
  });
}

/** A loop over topics in one method, the same crew kicked off for each. */
class Topics extends Flow<{ reports: string[] }> {
  static restoreKey: string | undefined;
  initialState = { reports: [] as string[] };
  @start() async research() {
    const crew = twoTaskCrew('topic-crew', ['Collect facts on', 'Rank facts on'], Topics.restoreKey);
    for (const topic of ['tides', 'volcanoes']) {
      const output = await crew.kickoff({ inputs: { topic }, bus: this.bus });
      this.state.reports.push(output.raw);
    }
    return this.state.reports.length;
  }
}

/** One crew kept on the flow, kicked off by two methods in turn. */
class Reused extends Flow<{ first: string; second: string }> {
  initialState = { first: '', second: '' };
  readonly crew = twoTaskCrew('editors', ['Edit draft', 'Proof draft']);
  @start() async partOne() {
    this.state.first = (await this.crew.kickoff({ inputs: { topic: 'one' }, bus: this.bus })).raw;
    return 'one';
  }
  @listen('partOne') async partTwo() {
    this.state.second = (await this.crew.kickoff({ inputs: { topic: 'two' }, bus: this.bus })).raw;
    return 'two';
  }
}

const taskOf = (text: string) =>
  text.match(/(Collect facts on|Rank facts on|Edit draft|Proof draft) \w+/)?.[0];

describe('one crew object kicked off more than once in a run', () => {
  it.each([
    ['by name', undefined],
    ['by restoreKey', 'topics'],
  ])(
    'in a loop, resumed in its second kickoff, continues each kickoff with its own work (%s)',
    async (_, key) => {
      Topics.restoreKey = key;
      const provider = new InMemoryProvider();
      const uninterrupted = await new Topics({
        bus: new EventBus(),
        checkpoint: { location: 'mem', provider, onEvents: ['task_completed'] },
      }).kickoff();
      expect(model.calls.map((call) => taskOf(call.userText))).toEqual([
        'Collect facts on tides',
        'Rank facts on tides',
        'Collect facts on volcanoes',
        'Rank facts on volcanoes',
      ]);
      const checkpoints = await provider.list('mem');
      expect(checkpoints).toHaveLength(4);
      // The first task of the "volcanoes" kickoff done: the "tides" kickoff is an entity of its own.
      const third = checkpoints[2]!;
      const document = await readDocument(provider, 'mem', third.id);
      const crews = document.entities.filter((entity) => entity.kind === 'crew');
      expect(crews.map((crew) => crew.data.status)).toEqual(['completed', 'running']);
      expect(new Set(crews.map((crew) => crew.id)).size).toBe(2);
      expect(document.metadata.entities.filter((entity) => entity.kind === 'crew')).toMatchObject([
        { name: 'topic-crew', status: 'completed', completed: 2, total: 2 },
        { name: 'topic-crew', status: 'running', completed: 1, total: 2 },
      ]);

      model.reset();
      const restored = await Topics.fromCheckpoint(
        { restoreFrom: `mem#${third.id}`, provider },
        { bus: new EventBus() },
      );
      const resumed = await restored.kickoff();
      logs.expect(olderWarning);
      expect(model.calls.map((call) => taskOf(call.userText))).toEqual(['Rank facts on volcanoes']);
      expect(resumed.state.reports).toEqual(uninterrupted.state.reports);
      expect(resumed.state.reports[0]).toContain('tides');
    },
  );

  it('kept on the flow and kicked off by two methods, resumed in the second, pays only its last task', async () => {
    const provider = new InMemoryProvider();
    const uninterrupted = await new Reused({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['task_completed'] },
    }).kickoff();
    // partOne done, "Edit draft two" done.
    const checkpoint = (await provider.list('mem'))[2]!;
    const document = await readDocument(provider, 'mem', checkpoint.id);
    expect(document.events.filter((event) => event.type === 'llm_call_completed')).toHaveLength(3);
    expect(document.entities.filter((entity) => entity.kind === 'crew')).toHaveLength(2);

    model.reset();
    const restored = await Reused.fromCheckpoint(
      { restoreFrom: `mem#${checkpoint.id}`, provider },
      { bus: new EventBus() },
    );
    const resumed = await restored.kickoff();
    logs.expect(olderWarning);
    expect(model.calls.map((call) => taskOf(call.userText))).toEqual(['Proof draft two']);
    expect(resumed.state.first).toBe(uninterrupted.state.first);
    expect(resumed.state.second).toBe(uninterrupted.state.second);
    // The resumed run's last checkpoint holds each kickoff with its own work, every task done.
    const resumedCheckpoints = (await provider.list('mem')).filter((stored) => stored.branch !== 'main');
    const latest = await readDocument(provider, 'mem', resumedCheckpoints.at(-1)!.id);
    const tasks = latest.entities
      .filter((entity) => entity.kind === 'crew')
      .map((crew) =>
        (crew.data.tasks as { status: string; output: { description: string } }[]).map(
          (task) => `${task.status}: ${task.output.description}`,
        ),
      );
    expect(tasks).toEqual([
      ['completed: Edit draft one', 'completed: Proof draft one'],
      ['completed: Edit draft two', 'completed: Proof draft two'],
    ]);
  });

  it('kicked off twice on its own (two runs) keeps its id and one entity per run', async () => {
    const provider = new InMemoryProvider();
    const crew = twoTaskCrew('solo', ['Collect facts on', 'Rank facts on']);
    crew.checkpoint = { location: 'mem', provider, onEvents: ['task_completed'] };
    const id = crew.id;
    await crew.kickoff({ inputs: { topic: 'tides' }, bus: new EventBus() });
    await crew.kickoff({ inputs: { topic: 'volcanoes' }, bus: new EventBus() });
    expect(crew.id).toBe(id);
    const last = await readDocument(provider, 'mem', (await provider.list('mem')).at(-1)!.id);
    expect(last.entities.map((entity) => entity.id)).toEqual([id]);
  });
});
