// A `@persist()` flow kicked off inside another flow's method joins that flow's run and claimed
// nothing of its own: two parent runs (two processes, or two kickoffs in one process) kicking off one
// child state id at once both ran the child's methods, and paid for its model calls twice. The
// nested kickoff now claims the head of its state's lineage in the store it saves to while it runs,
// and the second gets the typed `conflict` a root kickoff by that id gets (two processes and a
// SIGKILLed or Ctrl+C'd holder: persisted-state-claim.test.ts).
import { EventBus } from '@crewline/events';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';
import { stateLineageId } from './flow-storage.js';
import type { FlowResult } from './flow-types.js';
import { Flow, listen, persist, start } from './index.js';

const directory = temporaryDirectory('crewline-nested-claim-');
afterAll(() => directory.cleanup());

/** Every model call of every run in this file: what the tests count as paid. */
const model = offlineModel({ name: 'nested-state-claim', latencyMs: 150 });
afterEach(() => model.reset());

let counter = 0;
function freshLocation(store: 'sqlite' | 'json'): string {
  counter += 1;
  return `${directory.path}/store-${counter}${store === 'sqlite' ? '.db' : ''}`;
}

interface ReportState {
  id?: string;
  summary: string;
}

/** A persisted child whose one method runs a crew (a paid model call), and a parent that kicks it off. */
function nestedFlows(location: string) {
  @persist({ location })
  class Report extends Flow<ReportState> {
    initialState = { summary: '' };
    @start() async research() {
      const analyst = new Agent({ role: 'Analyst', goal: 'Summarise', backstory: 'Careful', llm: model });
      const crew = new Crew({
        agents: [analyst],
        tasks: [
          new Task({ description: 'Summarise the quarter', expectedOutput: 'one line', agent: analyst }),
        ],
      });
      const output = await crew.kickoff({ bus: this.bus });
      this.state.summary = output.raw;
      return output.raw;
    }
  }
  class Desk extends Flow<{ summary: string }> {
    initialState = { summary: '' };
    @start() async delegate() {
      const result: FlowResult<ReportState> = await new Report().kickoff({ inputs: { id: 'report-1' } });
      this.state.summary = result.state.summary;
      return result.status;
    }
  }
  return { Report, Desk };
}

const settings = [
  {
    name: 'SQLite, the parent checkpointing to the same database',
    store: 'sqlite' as const,
    parent: (location: string) => ({ checkpoint: { location, onEvents: ['*' as const] } }),
  },
  { name: 'SQLite, the parent not checkpointing', store: 'sqlite' as const, parent: () => ({}) },
  { name: 'JSON, the parent not checkpointing', store: 'json' as const, parent: () => ({}) },
];

describe.each(settings)('a @persist() state kicked off in two parent runs at once ($name)', (setting) => {
  it('runs in one of them; the other is refused before the child pays for anything', async () => {
    const location = freshLocation(setting.store);
    const { Desk } = nestedFlows(location);
    const outcomes = await Promise.allSettled(
      [0, 1].map(() => new Desk({ bus: new EventBus(), ...setting.parent(location) }).kickoff()),
    );

    expect(model.calls).toHaveLength(1);
    const completed = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    expect(completed).toHaveLength(1);
    const refused = outcomes.find((outcome) => outcome.status === 'rejected');
    expect(refused?.reason).toMatchObject({
      code: 'conflict',
      details: { flowName: 'Report', stateId: 'report-1', lineageId: stateLineageId('Report', 'report-1') },
    });
    expect(String((refused as PromiseRejectedResult).reason.message)).toContain(
      'state "report-1" is being run by flow Report in flow Desk',
    );
  });

  it('is released when the child ends: a later parent run is not refused', async () => {
    const location = freshLocation(setting.store);
    const { Desk } = nestedFlows(location);
    await new Desk({ bus: new EventBus(), ...setting.parent(location) }).kickoff();
    const again = await new Desk({ bus: new EventBus(), ...setting.parent(location) }).kickoff();
    expect(again.status).toBe('completed');
  });
});

describe('the claim of a nested @persist() state', () => {
  it('refuses a root kickoff of the same new state id while the nested one runs', async () => {
    const location = freshLocation('sqlite');
    const { Report, Desk } = nestedFlows(location);
    const nested = new Desk({ bus: new EventBus() }).kickoff();
    // Once the nested kickoff is inside its model call, it holds the state.
    while (model.calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const root = await new Report({ bus: new EventBus() })
      .kickoff({ inputs: { id: 'report-1' } })
      .catch((error: unknown) => error);
    await nested;
    expect(root).toMatchObject({ code: 'conflict', details: { stateId: 'report-1' } });
    expect(model.calls).toHaveLength(1);
  });

  it('refuses a root kickoff by id continuing a save the nested one made while it runs', async () => {
    const location = freshLocation('sqlite');
    const calls: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered: () => void = () => undefined;
    const inSecond = new Promise<void>((resolve) => {
      entered = resolve;
    });
    @persist({ location })
    class Steps extends Flow<{ id?: string; done: string[] }> {
      initialState = { done: [] as string[] };
      @start() first() {
        calls.push('first');
        this.state.done.push('first');
      }
      @listen('first') async second() {
        calls.push('second');
        entered();
        // Only the first to get here waits: one running beside it (the defect) ends the test at once.
        if (calls.filter((call) => call === 'second').length === 1) await gate;
        this.state.done.push('second');
      }
    }
    class Desk extends Flow<{ note: string }> {
      initialState = { note: '' };
      @start() async delegate() {
        await new Steps().kickoff({ inputs: { id: 'steps-1' } });
      }
    }
    const nested = new Desk({ bus: new EventBus() }).kickoff();
    // The first method's save (in the parent run's lineage) is stored: a root kickoff by id finds it.
    await inSecond;
    const root = await new Steps({ bus: new EventBus() })
      .kickoff({ inputs: { id: 'steps-1' } })
      .catch((error: unknown) => error);
    release();
    await nested;
    expect(root).toMatchObject({ code: 'conflict', details: { flowName: 'Steps', stateId: 'steps-1' } });
    expect(calls).toEqual(['first', 'second']);
  });

  it('is taken after a root kickoff of the state started its lineage, and lives beside the parent lease', async () => {
    const location = freshLocation('sqlite');
    const { Report, Desk } = nestedFlows(location);
    await new Report({ bus: new EventBus() }).kickoff({ inputs: { id: 'report-1' } });
    // The parent is a persisted root of its own (a lease on its lineage, same database).
    @persist({ location })
    class PersistedDesk extends Desk {}
    const result = await new PersistedDesk({ bus: new EventBus() }).kickoff({ inputs: { id: 'desk-1' } });
    expect(result.status).toBe('completed');
    const provider = new SqliteProvider();
    const lineages = new Set((await provider.list(location)).map((checkpoint) => checkpoint.lineageId));
    provider.close();
    expect(lineages).toContain(stateLineageId('Report', 'report-1'));
    expect(lineages).toContain(stateLineageId('PersistedDesk', 'desk-1'));
  });
});
