// The lineage a `@persist()` state starts (see persisted-state-claim.test.ts for two processes): a
// kickoff by a state id starts the state's own lineage (the same id in every process), claimed in
// the store the flow saves to; what keeps working around it: a state whose saves were all removed
// starts again, one object kicked off twice without an id, the typed refusal when another kickoff
// ran the state while this one looked for its saves.
import { EventBus } from '@crewline/events';
import { SqliteProvider } from '@crewline/provider-sqlite';
import type { ListQuery, StoredCheckpoint } from '@crewline/runtime-state';
import { afterAll, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { stateLineageId } from './flow-storage.js';
import { Flow, listen, persist, start } from './index.js';

const directory = temporaryDirectory('crewline-state-lineage-');
afterAll(() => directory.cleanup());

let counter = 0;
function freshLocation(): string {
  counter += 1;
  return `${directory.path}/states-${counter}.db`;
}

/** A SQLite store whose listing can be made to show nothing (a lookup made before a save landed). */
class LateListing extends SqliteProvider {
  hidden = false;
  override async list(location: string, query?: ListQuery): Promise<StoredCheckpoint[]> {
    return this.hidden ? [] : super.list(location, query);
  }
}

function persistedFlow(location: string, provider: SqliteProvider) {
  const calls: string[] = [];
  @persist({ location, provider })
  class Tally extends Flow<{ id?: string; count: number }> {
    initialState = { count: 0 };
    @start() first() {
      calls.push('first');
      this.state.count += 1;
      return this.state.count;
    }
    @listen('first') second(value: number) {
      calls.push('second');
      this.state.count = value + 1;
      return this.state.count;
    }
  }
  return { Tally, calls };
}

describe('the lineage of a @persist() state', () => {
  it('is the same for a state id in every process, and its checkpoints are on the state branch', async () => {
    const provider = new SqliteProvider();
    const location = freshLocation();
    const { Tally } = persistedFlow(location, provider);
    await new Tally({ bus: new EventBus() }).kickoff({ inputs: { id: 'customer-9' } });
    const saved = await provider.list(location);
    expect(saved.map((checkpoint) => [checkpoint.lineageId, checkpoint.branch])).toEqual([
      [stateLineageId('Tally', 'customer-9'), 'flow-states/customer-9'],
      [stateLineageId('Tally', 'customer-9'), 'flow-states/customer-9'],
    ]);
    expect(stateLineageId('Tally', 'customer-9')).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(stateLineageId('Tally', 'customer-10')).not.toBe(stateLineageId('Tally', 'customer-9'));
    expect(stateLineageId('Other', 'customer-9')).not.toBe(stateLineageId('Tally', 'customer-9'));
    provider.close();
  });

  it('refuses, in terms of the state, a kickoff whose lookup came before another kickoff ran it', async () => {
    const provider = new LateListing();
    const location = freshLocation();
    const { Tally, calls } = persistedFlow(location, provider);
    await new Tally({ bus: new EventBus() }).kickoff({ inputs: { id: 'order-4' } });
    calls.length = 0;
    // This kickoff looks for the state's saves as if before the first one's landed.
    provider.hidden = true;
    const refused = await new Tally({ bus: new EventBus() })
      .kickoff({ inputs: { id: 'order-4' } })
      .catch((error: unknown) => error);
    provider.hidden = false;
    expect(refused).toMatchObject({
      code: 'conflict',
      details: { flowName: 'Tally', stateId: 'order-4' },
    });
    expect(String((refused as Error).message)).toMatch(
      /^\[flow\] flow "Tally": state "order-4" was run by another process while this kickoff looked for its latest save .*kick off state "order-4" again/,
    );
    expect(calls).toEqual([]);
    // Kicked off again, it continues the state: nothing is left to run.
    const again = await new Tally({ bus: new EventBus() }).kickoff({ inputs: { id: 'order-4' } });
    expect(again.state.count).toBe(2);
    expect(calls).toEqual([]);
    provider.close();
  });

  it('refuses a second kickoff of a state one runs in this process, naming the holder', async () => {
    const provider = new SqliteProvider();
    const location = freshLocation();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered: () => void = () => undefined;
    const running = new Promise<void>((resolve) => {
      entered = resolve;
    });
    @persist({ location, provider })
    class Slow extends Flow<{ id?: string; done: boolean }> {
      initialState = { done: false };
      @start() async wait() {
        entered();
        await held;
        this.state.done = true;
      }
    }
    const first = new Slow({ bus: new EventBus() }).kickoff({ inputs: { id: 'job-1' } });
    await running;
    const refused = await new Slow({ bus: new EventBus() })
      .kickoff({ inputs: { id: 'job-1' } })
      .catch((error: unknown) => error);
    release();
    await first;
    expect(refused).toMatchObject({ code: 'conflict', details: { stateId: 'job-1', atClaim: true } });
    expect(String((refused as Error).message)).toContain(
      '[flow] flow "Slow": state "job-1" is being run by flow Slow on ',
    );
    provider.close();
  });

  it('starts a state again whose saves were all removed', async () => {
    const provider = new SqliteProvider();
    const location = freshLocation();
    const { Tally, calls } = persistedFlow(location, provider);
    await new Tally({ bus: new EventBus() }).kickoff({ inputs: { id: 'gone-1' } });
    for (const checkpoint of await provider.list(location)) await provider.delete(location, checkpoint.id);
    calls.length = 0;
    const result = await new Tally({ bus: new EventBus() }).kickoff({ inputs: { id: 'gone-1' } });
    expect(result.status).toBe('completed');
    expect(calls).toEqual(['first', 'second']);
    provider.close();
  });

  it('keeps one object kicked off twice without an id working, and lists its state', async () => {
    const provider = new SqliteProvider();
    const location = freshLocation();
    const { Tally, calls } = persistedFlow(location, provider);
    const flow = new Tally({ bus: new EventBus() });
    const first = await flow.kickoff();
    const second = await flow.kickoff();
    expect(second.stateId).toBe(first.stateId);
    expect(calls).toEqual(['first', 'second', 'first', 'second']);
    // Two lineages on the state's branch (each kickoff without an id starts one): one state, listed once.
    const states = await Tally.listStates();
    expect(states.map((state) => [state.id, state.lastMethod, state.checkpoints])).toEqual([
      [first.stateId, 'second', 4],
    ]);
    provider.close();
  });
});
