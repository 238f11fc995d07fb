// SPEC §6: `kickoff({ inputs: { id } })` of a `@persist()` flow restores that state and skips the
// methods it completed. A kickoff in another flow's method did only in a parent run restored from a
// checkpoint: in a new parent run it started the state afresh, and paid for every method again
// (a new run of the same pipeline, a parent kicked off again after a failure). A first version
// (052f659, reverted) listed the whole store two or three times per nested kickoff by id, and refused
// a state whose own method had stored a credential with advice for a continuation of a checkpoint.
import { EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { SqliteProvider } from '@crewline/provider-sqlite';
import type { CheckpointProvider } from '@crewline/runtime-state';
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

/** Whether the model was asked, in any call, for what `description` says. */
function asked(description: string): boolean {
  return model.calls.some((call) =>
    call.messages.some((message) => JSON.stringify(message).includes(description)),
  );
}

const secret = 'sk-live-0123456789abcdefghij';

interface ReportState {
  id?: string;
  draft: string;
  summary: string;
  /** Set by `draftIt` itself (`setsKey`): saved as [REDACTED], read by `summarise`. */
  apiKey?: string;
}

interface NestedOptions {
  /** Kicks the child off without an id (a new state each time). */
  withoutId?: boolean;
  /** The child's id is written in its initial state, and its kickoff gives none. */
  declaredId?: boolean;
  /** The second method fails the first time it runs. */
  failOnce?: boolean;
  /** The first method stores a credential in the state, which the second reads. */
  setsKey?: boolean;
  /** The parent hands the credential to the child in its kickoff inputs. */
  handsKey?: boolean;
  provider?: CheckpointProvider;
}

/**
 * A persisted child of two paid methods kicked off by its id in its parent's method `delegate`.
 */
function nestedFlows(location: string, options: NestedOptions = {}) {
  let failures = options.failOnce === true ? 1 : 0;
  @persist({ location, ...(options.provider ? { provider: options.provider } : {}) })
  class Report extends Flow<ReportState> {
    initialState = { draft: '', summary: '', ...(options.declaredId === true ? { id: 'report-1' } : {}) };
    @start() async draftIt() {
      this.state.draft = await paidStep(this, 'Draft the quarter');
      if (options.setsKey === true) this.state.apiKey = secret;
    }
    @listen('draftIt') async summarise() {
      if (failures > 0) {
        failures -= 1;
        throw new Error('the summary service is down');
      }
      if (options.setsKey === true && this.state.apiKey !== secret)
        throw new Error(`summarise was given the key as ${String(this.state.apiKey)}`);
      this.state.summary = await paidStep(this, 'Summarise the draft');
    }
  }
  class Desk extends Flow<{ summary: string }> {
    initialState = { summary: '' };
    @start() async delegate() {
      const inputs = {
        ...(options.withoutId === true || options.declaredId === true ? {} : { id: 'report-1' }),
        ...(options.handsKey === true ? { apiKey: secret } : {}),
      };
      const result: FlowResult<ReportState> = await new Report().kickoff({ inputs });
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
      expect(JSON.stringify(model.calls[1]!.messages)).toContain('Summarise the draft');
      expect(JSON.stringify(model.calls[1]!.messages)).not.toContain('Draft the quarter');
    });

    it('continues its latest save by the id written in its initial state as by inputs.id', async () => {
      const { Desk } = nestedFlows(freshLocation(store), { declaredId: true });
      await new Desk({ bus: new EventBus() }).kickoff();
      expect(model.calls).toHaveLength(2);
      expect((await new Desk({ bus: new EventBus() }).kickoff()).status).toBe('completed');
      expect(model.calls).toHaveLength(2);
    });

    it('kicked off without an id, starts a new state in every parent run', async () => {
      const { Desk } = nestedFlows(freshLocation(store), { withoutId: true });
      await new Desk({ bus: new EventBus() }).kickoff();
      expect(model.calls).toHaveLength(2);
      await new Desk({ bus: new EventBus() }).kickoff();
      expect(model.calls).toHaveLength(4);
    });

    it('is refused before anything runs when the unfinished save holds a credential the state set itself as [REDACTED], with advice for the nested kickoff', async () => {
      const location = freshLocation(store);
      const { Desk } = nestedFlows(location, { failOnce: true, setsKey: true });
      await expect(new Desk({ bus: new EventBus() }).kickoff()).rejects.toThrow(
        'the summary service is down',
      );
      expect(model.calls).toHaveLength(1);
      const refusal = await new Desk({ bus: new EventBus() }).kickoff().catch((error: unknown) => error);
      expect(refusal).toMatchObject({
        code: 'invalid_argument',
        details: {
          redactedState: ['apiKey'],
          inputs: ['apiKey'],
          flowName: 'Report',
          stateId: 'report-1',
          kickedOffIn: { flowName: 'Desk', method: 'delegate' },
        },
      });
      const message = (refusal as Error).message;
      expect(message).toContain(
        'flow "Report": state "report-1", kicked off by its id in method "delegate" of flow "Desk", continues its latest save',
      );
      expect(message).toContain(
        'Give it in that kickoff\'s inputs in method "delegate" of flow "Desk": kickoff({ inputs: { id: "report-1", apiKey: … } }), or kick it off under a new id to start the state afresh',
      );
      // Advice for a continuation of a checkpoint does not reach a nested kickoff.
      expect(message).not.toContain('--input');
      expect(message).not.toContain('resume');
      expect(message).not.toContain(secret);
      // Nothing was paid before the refusal.
      expect(model.calls).toHaveLength(1);

      // The refusal gave the state up, and the advice works: a parent that hands the key continues
      // the save, paying only for the summary.
      const { Desk: HandingDesk } = nestedFlows(location, { setsKey: true, handsKey: true });
      const handed = await new HandingDesk({ bus: new EventBus() }).kickoff();
      expect(handed.status).toBe('completed');
      expect(model.calls).toHaveLength(2);
      expect(JSON.stringify(model.calls[1]!.messages)).not.toContain('Draft the quarter');
    });

    it('finished with a credential it set itself saved as [REDACTED], runs nothing and is not refused', async () => {
      const { Desk } = nestedFlows(freshLocation(store), { setsKey: true });
      await new Desk({ bus: new EventBus() }).kickoff();
      expect(model.calls).toHaveLength(2);
      expect((await new Desk({ bus: new EventBus() }).kickoff()).status).toBe('completed');
      expect(model.calls).toHaveLength(2);
    });
  },
);

/**
 * The listings of the whole store a provider was asked for (`list` or `listWithUnreadable`; JSON's
 * `list` goes through its `listWithUnreadable`: one listing).
 */
function countListings(provider: CheckpointProvider): { count: number } {
  const counted = { count: 0 };
  let inListing = false;
  const counting = <Args extends unknown[], Result>(
    method: (...args: Args) => Promise<Result>,
  ): ((...args: Args) => Promise<Result>) => {
    return async (...args) => {
      if (inListing) return method(...args);
      counted.count += 1;
      inListing = true;
      try {
        return await method(...args);
      } finally {
        inListing = false;
      }
    };
  };
  provider.list = counting(provider.list.bind(provider));
  if (provider.listWithUnreadable !== undefined)
    provider.listWithUnreadable = counting(provider.listWithUnreadable.bind(provider));
  return counted;
}

describe.each(['sqlite', 'json'] as const)('a nested kickoff by id in a new parent run (%s)', (store) => {
  it('lists the store once, to find the state latest save, whatever it finds', async () => {
    const provider = store === 'sqlite' ? new SqliteProvider() : new JsonProvider();
    const listings = countListings(provider);
    const location = freshLocation(store);
    const { Desk } = nestedFlows(location, { provider });
    // Nothing saved yet: one listing finds nothing, and the state starts.
    await new Desk({ bus: new EventBus() }).kickoff();
    expect(listings.count).toBe(1);
    // Its save found and read (by its id, with no listing to resolve it): one listing again.
    await new Desk({ bus: new EventBus() }).kickoff();
    expect(listings.count).toBe(2);
    expect(model.calls).toHaveLength(2);
    // Without an id, nothing is looked for.
    const { Desk: NewStateDesk } = nestedFlows(location, { provider, withoutId: true });
    await new NewStateDesk({ bus: new EventBus() }).kickoff();
    expect(listings.count).toBe(2);
    expect(asked('Draft the quarter')).toBe(true);
    await provider.close?.();
  });
});

describe.each(['sqlite', 'json'] as const)(
  'a nested kickoff by id while another parent run runs the state (%s)',
  (store) => {
    it('is refused on the claim, before it looks for the save, and the next one continues the save', async () => {
      const provider = store === 'sqlite' ? new SqliteProvider() : new JsonProvider();
      const listings = countListings(provider);
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let drafting: () => void = () => undefined;
      const drafted = new Promise<void>((resolve) => {
        drafting = resolve;
      });
      @persist({ location: freshLocation(store), provider })
      class Slow extends Flow<{ id?: string; draft: string }> {
        initialState = { draft: '' };
        @start() async draftIt() {
          this.state.draft = await paidStep(this, 'Draft the quarter');
          drafting();
          await held;
        }
      }
      class Desk extends Flow<{ status: string }> {
        initialState = { status: '' };
        @start() async delegate() {
          this.state.status = (await new Slow().kickoff({ inputs: { id: 'slow-1' } })).status;
        }
      }
      const first = new Desk({ bus: new EventBus() }).kickoff();
      await drafted;
      const before = listings.count;
      const refused = await new Desk({ bus: new EventBus() }).kickoff().catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: 'conflict', details: { flowName: 'Slow', stateId: 'slow-1' } });
      expect(String((refused as Error).message)).toContain(
        'state "slow-1" is being run by flow Slow in flow Desk',
      );
      // Refused on the claim: the store was not listed for its save.
      expect(listings.count).toBe(before);
      release();
      expect((await first).state.status).toBe('completed');
      expect(model.calls).toHaveLength(1);
      // Released as the first ended: a new parent run continues its finished save, paying nothing.
      expect((await new Desk({ bus: new EventBus() }).kickoff()).state.status).toBe('completed');
      expect(model.calls).toHaveLength(1);
      await provider.close?.();
    });
  },
);
