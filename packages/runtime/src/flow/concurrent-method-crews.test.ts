import { CrewKickoffStartedEvent, EventBus, TaskCompletedEvent } from '@crewline/events';
import { type CheckpointConfigInput, type CheckpointDocument, readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';
import { Flow, listen, start } from './index.js';

// Methods that run at the same time, one completing while the other's crew is half done: each
// completed method is credited with the crews it ran itself, so a resume sets aside only those and
// the re-run method continues its own crew's saved work.

const model = offlineModel({ name: 'concurrent-method-crews' });
const ran: string[] = [];
/** Settles when the slow method's crew has done its first task (each test sets it on its bus). */
let slowFirstTaskDone: Promise<void> = Promise.resolve();
/** Settles when the slow method's crew has joined the run. */
let slowCrewJoined: Promise<void> = Promise.resolve();

afterEach(() => {
  model.reset();
  ran.length = 0;
  slowFirstTaskDone = Promise.resolve();
  slowCrewJoined = Promise.resolve();
});

function crewOf(role: string, descriptions: string[], name?: string): Crew {
  const agent = new Agent({ role, goal: `Be ${role}`, backstory: 'Plain', llm: model });
  return new Crew({
    ...(name !== undefined ? { name } : {}),
    agents: [agent],
    tasks: descriptions.map((description) => new Task({ description, expectedOutput: 'text', agent })),
  });
}

/** Settles on the first `event` emitted on `bus` (whose text holds `text`, when given). */
function settlesOn(
  bus: EventBus,
  event: typeof TaskCompletedEvent | typeof CrewKickoffStartedEvent,
  text?: string,
): Promise<void> {
  return new Promise((resolve) => {
    const off = bus.on(event, (_source: unknown, emitted: unknown) => {
      if (text !== undefined && !JSON.stringify(emitted).includes(text)) return;
      off();
      resolve();
    });
  });
}

/** The checkpoint written when `method` finished. */
async function finishedCheckpoint(provider: InMemoryProvider, method: string): Promise<CheckpointDocument> {
  for (const checkpoint of await provider.list('mem')) {
    if (checkpoint.trigger !== 'method_execution_finished') continue;
    const document = await readDocument(provider, 'mem', checkpoint.id);
    if ((document.events.at(-1) as { methodName?: string }).methodName === method) return document;
  }
  throw new Error(`no checkpoint written when "${method}" finished`);
}

function paidCalls(document: CheckpointDocument): number {
  return document.events.filter((event) => event.type === 'llm_call_completed').length;
}

function credited(document: CheckpointDocument): string[] {
  const execution = document.entities[0]?.data.execution as {
    nestedEntities: { kind: string; name: string }[];
  };
  return execution.nestedEntities.map((entity) => `${entity.kind}:${entity.name}`);
}

const checkpoint = (provider: InMemoryProvider): CheckpointConfigInput => ({
  location: 'mem',
  provider,
  onEvents: ['task_completed', 'method_execution_finished'],
});

class QuickAndSlow extends Flow<{ quick: string; slow: string }> {
  initialState = { quick: '', slow: '' };
  @start() begin() {
    ran.push('begin');
    return 'go';
  }
  @listen('begin') async slow() {
    ran.push('slow');
    const output = await crewOf('Worker', ['First step', 'Second step'], 'slow-crew').kickoff({
      bus: this.bus,
    });
    this.state.slow = output.raw;
    return output.raw;
  }
  @listen('begin') async quick() {
    ran.push('quick');
    await slowFirstTaskDone;
    this.state.quick = 'done';
    return 'quick';
  }
}

/** Both listeners run a crew under the default name; the slow one's joins the run first. */
class TwoSameNamedCrews extends Flow<{ slow: string; fast: string }> {
  initialState = { slow: '', fast: '' };
  @start() begin() {
    return 'go';
  }
  @listen('begin') async slow() {
    const output = await crewOf('Historian', ['Slow part one', 'Slow part two']).kickoff({ bus: this.bus });
    this.state.slow = output.raw;
    return output.raw;
  }
  @listen('begin') async fast() {
    await Promise.resolve();
    const output = await crewOf('Clerk', ['Fast only part']).kickoff({ bus: this.bus });
    await slowFirstTaskDone;
    this.state.fast = output.raw;
    return output.raw;
  }
}

/** A start method that runs no crew is still running when the slow method's crew joins. */
class WaitingStart extends Flow<{ slow: string; fast: string }> {
  initialState = { slow: '', fast: '' };
  @start() async slow() {
    const output = await crewOf('Historian', ['Slow part one', 'Slow part two']).kickoff({ bus: this.bus });
    this.state.slow = output.raw;
    return output.raw;
  }
  @start() async kick() {
    await slowCrewJoined;
    return 'go';
  }
  @listen('kick') async fast() {
    const output = await crewOf('Clerk', ['Fast only part']).kickoff({ bus: this.bus });
    await slowFirstTaskDone;
    this.state.fast = output.raw;
    return output.raw;
  }
}

describe('crews of flow methods that run at the same time', () => {
  it("credit a method that completed while another's crew ran with no crew of its own", async () => {
    const provider = new InMemoryProvider();
    const bus = new EventBus();
    slowFirstTaskDone = settlesOn(bus, TaskCompletedEvent);
    await new QuickAndSlow({ bus, checkpoint: checkpoint(provider) }).kickoff();
    expect(model.calls).toHaveLength(2);
    const document = await finishedCheckpoint(provider, 'quick');
    expect(paidCalls(document)).toBe(1);
    expect(credited(document)).toEqual([]);

    model.reset();
    ran.length = 0;
    const restored = await QuickAndSlow.fromCheckpoint(
      { restoreFrom: `mem#${document.metadata.id}`, provider },
      { bus: new EventBus() },
    );
    await restored.kickoff();
    expect(ran).toEqual(['slow']);
    // The slow crew's first task was paid for and checkpointed: only its second runs.
    expect(model.calls).toHaveLength(1);
    const last = await readDocument(provider, 'mem', (await provider.list('mem')).at(-1)!.id);
    const crews = last.entities
      .filter((entity) => entity.kind === 'crew')
      .map((entity) => (entity.data.tasks as { status: string }[]).map((task) => task.status).join('/'));
    expect(crews).toEqual(['completed/completed']);
  });

  it('hand each re-run method its own crew when the crews share a name', async () => {
    const provider = new InMemoryProvider();
    const bus = new EventBus();
    slowFirstTaskDone = settlesOn(bus, TaskCompletedEvent, 'Slow part one');
    const uninterrupted = await new TwoSameNamedCrews({ bus, checkpoint: checkpoint(provider) }).kickoff();
    expect(model.calls).toHaveLength(3);
    const document = await finishedCheckpoint(provider, 'fast');
    expect(document.entities.map((entity) => `${entity.kind}:${entity.name}`)).toEqual([
      'flow:TwoSameNamedCrews',
      'crew:crew',
      'crew:crew',
    ]);

    model.reset();
    const restored = await TwoSameNamedCrews.fromCheckpoint(
      { restoreFrom: `mem#${document.metadata.id}`, provider },
      { bus: new EventBus() },
    );
    const resumed = await restored.kickoff();
    expect(model.calls).toHaveLength(3 - paidCalls(document));
    expect(resumed.state.slow).toBe(uninterrupted.state.slow);
    expect(resumed.state.fast).toBe(uninterrupted.state.fast);
  });

  it('set aside the crew of the completed method, not the first saved crew of its name', async () => {
    const provider = new InMemoryProvider();
    const bus = new EventBus();
    slowCrewJoined = settlesOn(bus, CrewKickoffStartedEvent);
    slowFirstTaskDone = settlesOn(bus, TaskCompletedEvent, 'Slow part one');
    const uninterrupted = await new WaitingStart({ bus, checkpoint: checkpoint(provider) }).kickoff();
    expect(model.calls).toHaveLength(3);
    const document = await finishedCheckpoint(provider, 'fast');
    // `kick` ran no crew; `fast` ran the Clerk's, the second crew named "crew" of the run.
    expect(credited(document)).toEqual(['crew:crew']);

    model.reset();
    const restored = await WaitingStart.fromCheckpoint(
      { restoreFrom: `mem#${document.metadata.id}`, provider },
      { bus: new EventBus() },
    );
    const resumed = await restored.kickoff();
    expect(resumed.state.slow).toBe(uninterrupted.state.slow);
    expect(model.calls).toHaveLength(3 - paidCalls(document));
  });
});
