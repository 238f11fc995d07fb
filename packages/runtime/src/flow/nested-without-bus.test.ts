// A flow given a bus of its own (as the worker gives every flow it runs) whose methods kick off
// crews, agents and flows the way the guides write them: without passing the bus on. They must
// still be part of the flow's run — their events recorded and checkpointed, their progress restored
// on resume — or a resumed flow pays again for every model call they made.
import { type BaseEvent, EventBus } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Run } from '../checkpointing/run.js';
import { Crew } from '../crew/crew.js';
import { Task } from '../task/task.js';
import { captureLogs, type LogCapture } from '../testing/capture-logs.js';
import { offlineModel } from '../testing/index.js';
import { Flow, listen, start } from './index.js';

const model = offlineModel({ name: 'nested-without-bus' });

function researchCrew(): Crew {
  const researcher = new Agent({
    role: 'Researcher',
    goal: 'Research {topic}',
    backstory: 'Careful',
    llm: model,
  });
  return new Crew({
    agents: [researcher],
    tasks: [
      new Task({ description: 'Collect facts about {topic}', expectedOutput: 'bullets', agent: researcher }),
      new Task({ description: 'Rank the facts about {topic}', expectedOutput: 'ranked', agent: researcher }),
      new Task({ description: 'Summarise {topic}', expectedOutput: 'summary', agent: researcher }),
    ],
  });
}

class ReportFlow extends Flow<{ research: string; advice: string }> {
  initialState = { research: '', advice: '' };

  @start()
  async research() {
    this.state.research = (await researchCrew().kickoff({ inputs: { topic: 'tides' } })).raw;
    return this.state.research;
  }

  @listen('research')
  async advise() {
    const advisor = new Agent({ role: 'Advisor', goal: 'Advise', backstory: 'Calm', llm: model });
    this.state.advice = (await advisor.kickoff('Which tide is higher?')).raw;
    return this.state.advice;
  }
}

class InnerFlow extends Flow<{ note: string }> {
  initialState = { note: '' };
  @start()
  async note() {
    this.state.note = (await researchCrew().kickoff({ inputs: { topic: 'currents' } })).raw;
    return this.state.note;
  }
}

class OuterFlow extends Flow<{ inner: string }> {
  initialState = { inner: '' };
  @start()
  async delegate() {
    const result = await new InnerFlow().kickoff();
    this.state.inner = result.state.note;
    return this.state.inner;
  }
}

let logs: LogCapture;
beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => {
  model.reset();
  logs.stop();
});

describe('crews, agents and flows kicked off in a method without a bus, in a flow with a bus of its own', () => {
  it('belong to the flow run: its checkpoints hold their entities and events', async () => {
    const provider = new InMemoryProvider();
    const bus = new EventBus();
    const seen: string[] = [];
    bus.onAny((_source: unknown, event: BaseEvent) => void seen.push(event.type));
    const result = await new ReportFlow({
      bus,
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    }).kickoff();
    expect(result.status).toBe('completed');
    expect(model.calls).toHaveLength(4);
    // Delivered on the flow's bus, where a worker watches its run's model calls.
    expect(seen.filter((type) => type === 'llm_call_completed')).toHaveLength(4);
    const last = (await provider.list('mem')).at(-1)!;
    expect(last.entities.map((entity) => entity.kind)).toEqual(['flow', 'crew', 'agent']);
    const document = await readDocument(provider, 'mem', last.id);
    const types = document.events.map((event) => event.type);
    expect(types.filter((type) => type === 'task_completed')).toHaveLength(3);
    expect(types).toContain('lite_agent_execution_completed');
  });

  it('resume from every checkpoint without paying again for a checkpointed model call', async () => {
    const provider = new InMemoryProvider();
    const uninterrupted = await new ReportFlow({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    }).kickoff();
    const totalCalls = model.calls.length;
    const checkpoints = await provider.list('mem');
    expect(checkpoints.length).toBeGreaterThan(20);
    for (const checkpoint of checkpoints) {
      const document = await readDocument(provider, 'mem', checkpoint.id);
      const answered = document.events.filter((event) => event.type === 'llm_call_completed').length;
      model.reset();
      const restored = await ReportFlow.fromCheckpoint(
        { restoreFrom: `mem#${checkpoint.id}`, provider },
        { bus: new EventBus() },
      );
      const resumed = await restored.kickoff();
      const context = `resumed from ${checkpoint.trigger} ${checkpoint.id}`;
      expect(resumed.state, context).toEqual(uninterrupted.state);
      expect(model.calls.length, context).toBe(totalCalls - answered);
    }
    // Every checkpoint but the run's last continues on a new branch, with a warning.
    logs.expect('is not the latest of its run');
  });

  it('a flow in a method joins the outer run, and so does the crew it runs', async () => {
    const provider = new InMemoryProvider();
    const result = await new OuterFlow({
      bus: new EventBus(),
      checkpoint: { location: 'mem', provider, onEvents: ['task_completed'] },
    }).kickoff();
    expect(result.state.inner).not.toBe('');
    const checkpoints = await provider.list('mem');
    expect(checkpoints).toHaveLength(3);
    expect(checkpoints.at(-1)!.entities.map((entity) => entity.kind)).toEqual(['flow', 'flow', 'crew']);
  });

  it.each([
    ['a bus of its own', () => new EventBus()],
    ['the process-wide bus', () => undefined],
  ])(
    'a crew a timer of the run kicks off after the run ended starts a run of its own (%s)',
    async (_label, busOf) => {
      // Found by a review: a timer started inside a run keeps the run's context after the run ended.
      const provider = new InMemoryProvider();
      let later: Promise<unknown> | undefined;
      class TimerFlow extends Flow<{ started: boolean }> {
        initialState = { started: false };
        @start()
        go() {
          later = new Promise((resolve, reject) =>
            setTimeout(() => {
              const crew = researchCrew();
              crew.checkpoint = { location: 'later', provider, onEvents: ['*'] };
              crew.kickoff({ inputs: { topic: 'waves' } }).then(resolve, reject);
            }, 30),
          );
          this.state.started = true;
          return true;
        }
      }
      const bus = busOf();
      await new TimerFlow({
        ...(bus ? { bus } : {}),
        checkpoint: { location: 'mem', provider, onEvents: ['*'] },
      }).kickoff();
      const flowCheckpoints = await provider.list('mem');
      await later;
      expect(await provider.list('mem')).toEqual(flowCheckpoints);
      const crewCheckpoints = await provider.list('later');
      expect(crewCheckpoints.length).toBeGreaterThan(0);
      expect(crewCheckpoints[0]!.entities.map((entity) => entity.kind)).toEqual(['crew']);
      expect(crewCheckpoints[0]!.lineageId).not.toBe(flowCheckpoints[0]!.lineageId);
    },
  );

  // Found by a review: an inner run on another bus that had ended hid the flow run around it.
  it('a timer of an ended inner run, while the flow run goes on, joins the flow run', async () => {
    const provider = new InMemoryProvider();
    const side = new EventBus();
    let later: Promise<Run | undefined> | undefined;
    let flowRun: Run | undefined;
    side.onAny((_s: unknown, event: { type: string }) => {
      if (event.type !== 'crew_kickoff_started' || later) return;
      later = new Promise((resolve, reject) =>
        setTimeout(() => {
          const agent = new Agent({ role: 'Late', goal: 'g', backstory: 'b', llm: model });
          agent.kickoff('hello').then(() => resolve(agent.lastRun), reject);
        }, 30),
      );
    });
    class SideFlow extends Flow<{ done: boolean }> {
      initialState = { done: false };
      @start()
      async go() {
        flowRun = Run.current();
        const worker = new Agent({ role: 'W', goal: 'g', backstory: 'b', llm: model });
        const crew = new Crew({
          agents: [worker],
          tasks: [new Task({ description: 'd', expectedOutput: 'e', agent: worker })],
        });
        await crew.kickoff({ bus: side }); // a run of its own, on another bus
        const lateRun = await later; // the crew run has ended; the flow run goes on
        this.state.done = lateRun === flowRun;
        return this.state.done;
      }
    }
    const result = await new SideFlow({
      checkpoint: { location: 'mem', provider, onEvents: ['*'] },
    }).kickoff();
    expect(flowRun).toBeDefined();
    expect(result.state.done).toBe(true);
  });

  it('a crew kicked off after the flow run ended starts a run of its own', async () => {
    const provider = new InMemoryProvider();
    await new ReportFlow({ bus: new EventBus(), checkpoint: { location: 'mem', provider } }).kickoff();
    const crew = researchCrew();
    crew.checkpoint = { location: 'after', provider };
    await crew.kickoff({ inputs: { topic: 'waves' } });
    const [first] = await provider.list('after');
    expect(first?.entities.map((entity) => entity.kind)).toEqual(['crew']);
  });
});
