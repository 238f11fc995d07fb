import { EventBus } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';
import { Flow, listen, start } from './index.js';

// Two methods run at the same time, each with a crew of the default name, and a checkpoint is
// written while both run. The crews join the run in an order the timing decides, which differs on a
// resume: each re-run method must take up the crew it had started, not the n-th one of the name.

const model = offlineModel({ name: 'running-method-crews', latencyMs: 60 });
afterEach(() => model.reset());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function crewOf(topic: string, restoreKey?: string): Crew {
  const agent = new Agent({ role: `Writer ${topic}`, goal: 'Write', backstory: 'Plain', llm: model });
  return new Crew({
    ...(restoreKey !== undefined ? { restoreKey } : {}),
    agents: [agent],
    tasks: [`Outline ${topic}`, `Write ${topic}`].map(
      (description) => new Task({ description, expectedOutput: 'text', agent }),
    ),
  });
}

class TwoAtOnce extends Flow<{ a: string; b: string }> {
  initialState = { a: '', b: '' };
  @start() begin() {
    return 'go';
  }
  // Prepares with a model call first: its crew joins the run after b's in the first run, but first
  // on a resume, where the preparation's saved answer comes back at once.
  @listen('begin') async a() {
    await new Agent({ role: 'Planner', goal: 'Plan', backstory: 'Plain', llm: model }).kickoff(
      'Plan apples',
      {
        bus: this.bus,
      },
    );
    this.state.a = (await crewOf('apples').kickoff({ bus: this.bus })).raw;
    return 'a';
  }
  @listen('begin') async b() {
    await sleep(20);
    this.state.b = (await crewOf('bananas').kickoff({ bus: this.bus })).raw;
    return 'b';
  }
}

/** A flow that writes one topic with a crew (of the default name): two run at once below. */
class Writer extends Flow<{ topic: string; text: string }> {
  initialState = { topic: '', text: '' };
  @start() async write() {
    this.state.text = (await crewOf(this.state.topic).kickoff({ bus: this.bus })).raw;
    return this.state.text;
  }
}

/** {@link TwoAtOnce} with each method's crew inside a flow of its own, both of one class. */
class TwoFlowsAtOnce extends TwoAtOnce {
  override async a() {
    await new Agent({ role: 'Planner', goal: 'Plan', backstory: 'Plain', llm: model }).kickoff(
      'Plan apples',
      {
        bus: this.bus,
      },
    );
    this.state.a = (await new Writer().kickoff({ inputs: { topic: 'apples' } })).state.text;
    return 'a';
  }
  override async b() {
    await sleep(20);
    this.state.b = (await new Writer().kickoff({ inputs: { topic: 'bananas' } })).state.text;
    return 'b';
  }
}

/** Reads checkpoints as a version of crewline that saved no `started` list in executions wrote them. */
class WithoutStartedLists extends InMemoryProvider {
  stripped = 0;
  override async read(location: string, id: string) {
    const raw = await super.read(location, id);
    if (!('text' in raw)) return raw;
    return {
      text: raw.text.replace(/,\s*"started":\s*\[[^\]]*\]/g, () => {
        this.stripped += 1;
        return '';
      }),
    };
  }
}

/** Resumes `flowClass` from each checkpoint of a first run; what went wrong, per checkpoint. */
async function resumeFromEach(
  flowClass: typeof TwoAtOnce,
  provider = new InMemoryProvider(),
): Promise<string[]> {
  const flow = new flowClass({
    bus: new EventBus(),
    checkpoint: { location: 'mem', provider, onEvents: ['task_completed'] },
  });
  await flow.kickoff();
  const total = model.calls.length;
  expect(total).toBe(5);
  const failures: string[] = [];
  for (const [index, checkpoint] of (await provider.list('mem')).entries()) {
    const document = await readDocument(provider, 'mem', checkpoint.id);
    const paid = document.events.filter((event) => event.type === 'llm_call_completed').length;
    model.reset();
    const restored = await flowClass.fromCheckpoint(
      { restoreFrom: `mem#${checkpoint.id}`, provider },
      { bus: new EventBus() },
    );
    const resumed = await restored.kickoff();
    const at = `#${index} (${paid} of ${total} paid)`;
    if (model.calls.length !== total - paid) failures.push(`${at}: ${model.calls.length} calls on resume`);
    if (!resumed.state.a.includes('apples')) failures.push(`${at}: a = ${resumed.state.a.slice(0, 60)}`);
    if (!resumed.state.b.includes('bananas')) failures.push(`${at}: b = ${resumed.state.b.slice(0, 60)}`);
  }
  return failures;
}

describe('methods running at once when the checkpoint was written', () => {
  it('each take up the crew they had started, whatever order the crews join in on resume', async () => {
    expect(await resumeFromEach(TwoAtOnce)).toEqual([]);
  });

  it('each take up the flow they had started, and its crew', async () => {
    expect(await resumeFromEach(TwoFlowsAtOnce)).toEqual([]);
  });

  it('still resume from a checkpoint written before executions recorded what they started', async () => {
    const provider = new WithoutStartedLists();
    const failures = await resumeFromEach(TwoAtOnce, provider);
    expect(provider.stripped).toBeGreaterThan(0);
    // Read, and continued by name and order: the crews may swap, but nothing is refused or paid twice.
    expect(failures.filter((failure) => failure.includes('calls on resume'))).toEqual([]);
  });

  it('record in the saved flow which crews each running execution had started', async () => {
    const provider = new InMemoryProvider();
    await new TwoAtOnce({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['task_completed'] },
    }).kickoff();
    const [first] = await provider.list('mem');
    const document = await readDocument(provider, 'mem', first!.id);
    const flow = document.entities[0]!.data as {
      execution: { pending: { method: string; started?: { kind: string; id?: string }[] }[] };
    };
    const crewIds = document.entities.filter((entity) => entity.kind === 'crew').map((entity) => entity.id);
    const started = flow.execution.pending.flatMap((activation) =>
      (activation.started ?? []).filter((entity) => entity.kind === 'crew').map((entity) => entity.id),
    );
    expect(started.sort()).toEqual([...crewIds].sort());
  });
});
