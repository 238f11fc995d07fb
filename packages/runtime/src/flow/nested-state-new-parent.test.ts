// SPEC §6: `kickoff({ inputs: { id } })` of a `@persist()` flow restores that state and skips the
// methods it completed. A kickoff in another flow's method did only in a parent run restored from a
// checkpoint: in a new parent run it started the state afresh, and paid for every method again
// (a new run of the same pipeline, a parent kicked off again after a failure).
import { EventBus } from '@crewline/events';
import { SqliteProvider } from '@crewline/provider-sqlite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';
import type { FlowResult } from './flow-types.js';
import { Flow, listen, persist, start } from './index.js';

const directory = temporaryDirectory('crewline-nested-new-parent-');
afterAll(() => directory.cleanup());

/** Every model call of the runs in this file: what the tests count as paid. */
const model = offlineModel({ name: 'nested-state-new-parent' });
afterEach(() => model.reset());

let counter = 0;
function freshLocation(store: 'sqlite' | 'json'): string {
  counter += 1;
  return `${directory.path}/store-${counter}${store === 'sqlite' ? '.db' : ''}`;
}

/** One paid model call (a one-task crew), run in the flow's own bus. */
async function paidStep(flow: Flow<object>, description: string): Promise<string> {
  const agent = new Agent({ role: 'Analyst', goal: 'Summarise', backstory: 'Careful', llm: model });
  const crew = new Crew({
    agents: [agent],
    tasks: [new Task({ description, expectedOutput: 'one line', agent })],
  });
  return (await crew.kickoff({ bus: flow.bus })).raw;
}

interface ReportState {
  id?: string;
  draft: string;
  summary: string;
}

/**
 * A persisted child of two paid methods kicked off by its id in its parent's method; `failOnce`
 * makes the second method fail the first time it runs.
 */
function nestedFlows(location: string, options: { failOnce?: boolean; provider?: SqliteProvider } = {}) {
  let failures = options.failOnce === true ? 1 : 0;
  @persist({ location, ...(options.provider ? { provider: options.provider } : {}) })
  class Report extends Flow<ReportState> {
    initialState = { draft: '', summary: '' };
    @start() async draftIt() {
      this.state.draft = await paidStep(this, 'Draft the quarter');
    }
    @listen('draftIt') async summarise() {
      if (failures > 0) {
        failures -= 1;
        throw new Error('the summary service is down');
      }
      this.state.summary = await paidStep(this, 'Summarise the draft');
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
  return { Desk };
}

describe.each(['sqlite', 'json'] as const)(
  'a @persist() state kicked off by its id in a new parent run (%s)',
  (store) => {
    it('continues its latest save: a finished state runs and pays for nothing again', async () => {
      const { Desk } = nestedFlows(freshLocation(store));
      const first = await new Desk({ bus: new EventBus() }).kickoff();
      expect(model.calls).toHaveLength(2);
      const again = await new Desk({ bus: new EventBus() }).kickoff();
      expect(again.status).toBe('completed');
      expect(again.state.summary).toBe(first.state.summary);
      expect(model.calls).toHaveLength(2);
    });

    it('continues a state its last parent run left unfinished from the method that did not complete', async () => {
      const { Desk } = nestedFlows(freshLocation(store), { failOnce: true });
      await expect(new Desk({ bus: new EventBus() }).kickoff()).rejects.toThrow(
        'the summary service is down',
      );
      expect(model.calls).toHaveLength(1);
      const again = await new Desk({ bus: new EventBus() }).kickoff();
      expect(again.status).toBe('completed');
      // Only the summary is paid for again: the draft was saved.
      expect(model.calls).toHaveLength(2);
      expect(
        model.calls[1]!.messages.some((message) => JSON.stringify(message).includes('Summarise the draft')),
      ).toBe(true);
    });
  },
);

/** A SQLite provider whose next listing, once armed, returns what it read only after `release`. */
class HeldListing extends SqliteProvider {
  #hold: Promise<void> | undefined;
  holdNextListing(until: Promise<void>): void {
    this.#hold = until;
  }
  override async list(...args: Parameters<SqliteProvider['list']>): ReturnType<SqliteProvider['list']> {
    const listed = await super.list(...args);
    const hold = this.#hold;
    this.#hold = undefined;
    if (hold) await hold;
    return listed;
  }
}

describe('a nested kickoff by id whose state another kickoff ran between its look and its claim', () => {
  it('is refused before it runs anything, rather than running that work again', async () => {
    const provider = new HeldListing();
    const { Desk } = nestedFlows(freshLocation('sqlite'), { provider });
    let release: () => void = () => undefined;
    provider.holdNextListing(new Promise<void>((resolve) => (release = resolve)));
    // This one looks for the state's saves first (nothing yet) and is held there...
    const late = new Desk({ bus: new EventBus() }).kickoff().catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // ...while another parent run kicks the state off, runs it to its end and releases it.
    await new Desk({ bus: new EventBus() }).kickoff();
    expect(model.calls).toHaveLength(2);
    release();
    expect(await late).toMatchObject({
      code: 'conflict',
      details: { flowName: 'Report', stateId: 'report-1' },
    });
    expect(String((await late) as Error)).toContain('nothing was run: kick off state "report-1" again');
    expect(model.calls).toHaveLength(2);
    await provider.close();
  });
});
