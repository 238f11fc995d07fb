import { EventBus } from '@crewline/events';
import { type CheckpointDocument, readDocument } from '@crewline/runtime-state';
import { parseCrewData, parseFlowData } from '@crewline/runtime-state/internal';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { carriedTaskNumbers } from '../restore/saved-interrupted-tasks.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';
import { Flow, listen, start } from './index.js';

// A resumed flow runs its interrupted methods again; until each has kicked its crew off again, that
// crew's saved work is reserved for it and no entity of the run holds it. A checkpoint written in
// that window must still hold it, or a resume from there pays the crew's finished calls again.

let failWrite = false;
const model = offlineModel({
  name: 'resume-before-crews-rejoin',
  latencyMs: 60,
  failOn: (call) => failWrite && call.userText.includes('Write essay'),
});
afterEach(() => {
  model.reset();
  failWrite = false;
  essayKicksCrewOff = true;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** How long each method of {@link ThreeAtOnce} waits before its work: a resume changes the timing. */
const delays = { a: 0, b: 20, c: 400 };

function crewOf(topic: string): Crew {
  const agent = new Agent({ role: `Writer ${topic}`, goal: 'Write', backstory: 'Plain', llm: model });
  return new Crew({
    agents: [agent],
    tasks: [`Outline ${topic}`, `Write ${topic}`].map(
      (description) => new Task({ description, expectedOutput: 'text', agent }),
    ),
  });
}

class ThreeAtOnce extends Flow<{ a: string; b: string; c: string }> {
  initialState = { a: '', b: '', c: '' };
  @start() begin() {
    return 'go';
  }
  @listen('begin') async a() {
    await sleep(delays.a);
    this.state.a = (await crewOf('apples').kickoff({ bus: this.bus })).raw;
    return 'a';
  }
  @listen('begin') async b() {
    await sleep(delays.b);
    this.state.b = (await crewOf('bananas').kickoff({ bus: this.bus })).raw;
    return 'b';
  }
  @listen('begin') async c() {
    await sleep(delays.c);
    this.state.c = 'done';
    return 'c';
  }
}

/** A flow that writes one topic with a crew: {@link ThreeFlowsAtOnce} kicks off two. */
class Writer extends Flow<{ topic: string; text: string }> {
  initialState = { topic: '', text: '' };
  @start() async write() {
    this.state.text = (await crewOf(this.state.topic).kickoff({ bus: this.bus })).raw;
    return this.state.text;
  }
}

/** {@link ThreeAtOnce} with the crews of `a` and `b` each inside a flow of its own, of one class. */
class ThreeFlowsAtOnce extends ThreeAtOnce {
  override async a() {
    await sleep(delays.a);
    this.state.a = (await new Writer().kickoff({ inputs: { topic: 'apples' } })).state.text;
    return 'a';
  }
  override async b() {
    await sleep(delays.b);
    this.state.b = (await new Writer().kickoff({ inputs: { topic: 'bananas' } })).state.text;
    return 'b';
  }
}

/** False: the code of {@link Essay} changed since its checkpoint, its method no longer kicks the crew off. */
let essayKicksCrewOff = true;

class Essay extends Flow<{ text: string }> {
  initialState = { text: '' };
  @start() async write() {
    this.state.text = essayKicksCrewOff ? (await crewOf('essay').kickoff({ bus: this.bus })).raw : 'short';
    return this.state.text;
  }
}

const paidCalls = () => model.calls.map((call) => call.userText.match(/(Outline|Write) \w+/)?.[0]);
const llmCalls = (document: CheckpointDocument) =>
  document.events.filter((event) => event.type === 'llm_call_completed').length;
const crewsOf = (document: CheckpointDocument) =>
  document.entities.filter((entity) => entity.kind === 'crew');

/**
 * Runs {@link ThreeAtOnce} once (apples and bananas each finish their first task before the
 * checkpoint taken), then resumes it from the checkpoint with both crews half done, with `c`
 * completing first: returns the checkpoints that resume wrote.
 */
async function resumeWithCFirst(provider: InMemoryProvider, flowClass: typeof ThreeAtOnce = ThreeAtOnce) {
  const options = () => ({
    bus: new EventBus(),
    checkpoint: {
      location: 'mem',
      provider,
      onEvents: ['task_completed', 'method_execution_finished'] as const,
    },
  });
  Object.assign(delays, { a: 0, b: 20, c: 400 });
  await new flowClass(options()).kickoff();
  const first = await provider.list('mem');
  let halfDone: (typeof first)[number] | undefined;
  for (const checkpoint of first) {
    if (llmCalls(await readDocument(provider, 'mem', checkpoint.id)) === 2) {
      halfDone = checkpoint;
      break;
    }
  }
  expect(halfDone).toBeDefined();
  model.reset();
  Object.assign(delays, { a: 100, b: 100, c: 0 });
  const resumed = await flowClass.fromCheckpoint(
    { restoreFrom: `mem#${halfDone!.id}`, provider, onConflict: 'fork' },
    options(),
  );
  await resumed.kickoff();
  expect(paidCalls()).toHaveLength(2);
  return (await provider.list('mem')).slice(first.length);
}

describe('a checkpoint of a resumed run written before re-run methods kicked their crews off again', () => {
  it('holds their saved work: resuming from it pays only what was left, each crew its own', async () => {
    const provider = new InMemoryProvider();
    const written = await resumeWithCFirst(provider);
    const afterC = written[0]!;
    const document = await readDocument(provider, 'mem', afterC.id);
    expect(afterC.trigger).toBe('method_execution_finished');
    expect(crewsOf(document)).toHaveLength(2);
    // Each execution still lists the saved crew it takes up again.
    const pending = parseFlowData(document.entities[0]!).execution.pending;
    expect(pending.map((due) => [due.method, due.started?.length])).toEqual([
      ['a', 1],
      ['b', 1],
    ]);

    model.reset();
    Object.assign(delays, { a: 50, b: 0, c: 0 });
    const again = await ThreeAtOnce.fromCheckpoint(
      { restoreFrom: `mem#${afterC.id}`, provider },
      { bus: new EventBus() },
    );
    const result = await again.kickoff();
    expect(paidCalls().sort()).toEqual(['Write apples', 'Write bananas']);
    expect(result.state.a).toContain('apples');
    expect(result.state.b).toContain('bananas');
  });

  it.each([
    ['crews', ThreeAtOnce],
    ['flows with their crews', ThreeFlowsAtOnce],
  ])('every checkpoint of the resume resumes paying only what was left (%s)', async (_, flowClass) => {
    const provider = new InMemoryProvider();
    const written = await resumeWithCFirst(provider, flowClass);
    const failures: string[] = [];
    for (const [index, checkpoint] of written.entries()) {
      const document = await readDocument(provider, 'mem', checkpoint.id);
      // Two calls before the checkpoint the resume continued, and the resume's own up to here.
      const left = 4 - llmCalls(document);
      // Each entity once, under its own id.
      const ids = document.entities.map((entity) => entity.id);
      if (new Set(ids).size !== ids.length) failures.push(`#${index}: an id twice in ${ids}`);
      model.reset();
      Object.assign(delays, { a: 50, b: 0, c: 0 });
      const resumed = await flowClass.fromCheckpoint(
        { restoreFrom: `mem#${checkpoint.id}`, provider, onConflict: 'fork' },
        { bus: new EventBus() },
      );
      const result = await resumed.kickoff();
      const whole = result.state.a.includes('apples') && result.state.b.includes('bananas');
      if (paidCalls().length !== left || !whole)
        failures.push(`#${index} (${checkpoint.trigger}): paid ${paidCalls()} where ${left} were left`);
    }
    expect(failures).toEqual([]);
  });

  it("onEvents '*': no checkpoint of a resume that failed again pays the finished outline again", async () => {
    const provider = new InMemoryProvider();
    const options = () => ({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: '*' as const },
    });
    failWrite = true;
    await expect(new Essay(options()).kickoff()).rejects.toThrow();
    const first = await provider.list('mem');
    // Resumed from the failed run's latest checkpoint while the model still fails: fails again.
    await expect(
      (await Essay.fromCheckpoint({ restoreFrom: 'mem', provider }, options())).kickoff(),
    ).rejects.toThrow();
    const second = (await provider.list('mem')).slice(first.length);
    expect(second.map((checkpoint) => checkpoint.trigger)).toContain('method_execution_started');

    failWrite = false;
    const failures: string[] = [];
    for (const [index, checkpoint] of second.entries()) {
      const document = await readDocument(provider, 'mem', checkpoint.id);
      // The continuation plan the CLI shows: the crew's tasks run again (continued), none carried.
      if (carriedTaskNumbers(document).size !== 0) failures.push(`#${index}: the plan carries tasks`);
      model.reset();
      const resumed = await Essay.fromCheckpoint(
        { restoreFrom: `mem#${checkpoint.id}`, provider, onConflict: 'fork' },
        { bus: new EventBus() },
      );
      await resumed.kickoff();
      const outlines = paidCalls().filter((call) => call === 'Outline essay').length;
      if (outlines !== 0)
        failures.push(
          `#${index} ${checkpoint.trigger} (${crewsOf(document).length} crews saved): outline paid again`,
        );
    }
    expect(failures).toEqual([]);
  });

  it('a crew the re-run no longer kicks off stays as saved in its later checkpoints', async () => {
    const provider = new InMemoryProvider();
    failWrite = true;
    await expect(
      new Essay({ bus: new EventBus(), checkpoint: { location: 'mem', provider } }).kickoff(),
    ).rejects.toThrow();
    const failed = await readDocument(provider, 'mem', (await provider.list('mem')).at(-1)!.id);
    const saved = crewsOf(failed)[0]!;
    failWrite = false;
    model.reset();

    essayKicksCrewOff = false;
    const resumed = await Essay.fromCheckpoint(
      { restoreFrom: 'mem', provider },
      { bus: new EventBus(), checkpoint: { location: 'mem', provider, onEvents: ['flow_finished'] } },
    );
    expect((await resumed.kickoff()).state.text).toBe('short');
    expect(model.calls).toHaveLength(0);
    const finished = await readDocument(provider, 'mem', (await provider.list('mem')).at(-1)!.id);
    expect(finished.metadata.trigger).toBe('flow_finished');
    expect(crewsOf(finished)).toEqual([saved]);
    expect(parseCrewData(crewsOf(finished)[0]!).tasks.filter((task) => task.output !== null)).toHaveLength(1);
    // Credited to the completed method, so a later resume carries it as it is.
    expect(parseFlowData(finished.entities[0]!).execution.nestedEntities).toEqual([
      { kind: 'crew', name: saved.name, id: saved.id },
    ]);
  });
});
