// Review r-wave2 of 058f3ce (a nested @persist() kickoff claims its state's lineage head):
// - a root kickoff continuing a nested save other than by the state id (`Flow.resume({ id }, answer)`,
//   `fromCheckpoint(...).kickoff()`) claimed nothing of the state: a nested kickoff of the same state
//   in another parent ran beside it and paid for its methods;
// - a fork of a parent, made while the original parent runs the child, was refused (a fork is meant
//   to run again on its own branch: it claims nothing of the child's state);
// - the refusal led with a lineage id nobody gave, said a nested holder "continued" the state,
//   offered a fork of a save the state did not have, and did not say the holder was this process.
import { hostname } from 'node:os';
import { CheckpointCompletedEvent, EventBus } from '@crewline/events';
import { afterAll, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { stateLineageId, storageTarget } from './flow-storage.js';
import { Flow, listen, persist, start } from './index.js';

const directory = temporaryDirectory('crewline-nested-claim-continued-');
afterAll(() => directory.cleanup());

let counter = 0;
function freshLocation(store: 'sqlite' | 'json'): string {
  counter += 1;
  return `${directory.path}/store-${counter}${store === 'sqlite' ? '.db' : ''}`;
}

/** A promise and the function that settles it. */
function signal(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe.each(['sqlite', 'json'] as const)('a resume by id of a nested pause (%s)', (store) => {
  it('holds the state: a nested kickoff of it in another parent meanwhile is refused and runs nothing', async () => {
    const location = freshLocation(store);
    const paid: string[] = [];
    const gate = signal();
    const publishing = signal();
    @persist({ location })
    class Asking extends Flow<{ id?: string; answer: string }> {
      initialState = { answer: '' };
      @start() async research() {
        paid.push('research');
      }
      @listen('research') async question() {
        this.state.answer = await this.ask('Go on?');
      }
      @listen('question') async publish() {
        paid.push(`publish(${this.state.answer})`);
        publishing.open();
        await gate.promise;
      }
    }
    class Parent extends Flow<{ status: string }> {
      initialState = { status: '' };
      @start() async delegate() {
        this.state.status = (await new Asking().kickoff({ inputs: { id: 'asking-state' } })).status;
      }
    }
    const paused = await new Parent({
      bus: new EventBus(),
      checkpoint: { location, onEvents: ['*'] },
    }).kickoff();
    expect(paused.state.status).toBe('paused');
    const resumed = Asking.resume({ id: 'asking-state' }, 'yes', { bus: new EventBus() });
    await publishing.promise;
    const other = await new Parent({ bus: new EventBus() }).kickoff().catch((error: unknown) => error);
    gate.open();
    expect((await resumed).status).toBe('completed');
    expect(other).toMatchObject({
      code: 'conflict',
      details: {
        flowName: 'Asking',
        stateId: 'asking-state',
        lineageId: stateLineageId('Asking', 'asking-state'),
      },
    });
    expect(String((other as Error).message)).toContain(
      'state "asking-state" is being run by flow Asking on ',
    );
    expect(paid).toEqual(['research', 'publish(yes)']);
    // Released as the resume ended: the state can be kicked off again at once.
    expect((await new Parent({ bus: new EventBus() }).kickoff()).state.status).toBe('paused');
  });
});

describe('a fork of a parent while the original parent runs its nested @persist() child', () => {
  it.each(['sqlite', 'json'] as const)('runs the child again on its own branch (%s)', async (store) => {
    const location = freshLocation(store);
    const gate = signal();
    const writing = signal();
    const runs: string[] = [];
    @persist({ location })
    class Report extends Flow<{ id?: string; text: string }> {
      initialState = { text: '' };
      @start() async write() {
        runs.push('Report.write');
        writing.open();
        if (runs.length === 1) await gate.promise;
        this.state.text = 'done';
      }
    }
    class Desk extends Flow<{ prepared: boolean; text: string }> {
      initialState = { prepared: false, text: '' };
      @start() prepare() {
        this.state.prepared = true;
      }
      @listen('prepare') async delegate() {
        const result = await new Report().kickoff({ inputs: { id: 'report-1' } });
        this.state.text = result.state.text;
      }
    }
    const checkpoint = { location, onEvents: ['method_execution_finished' as const] };
    const original = new Desk({ bus: new EventBus(), checkpoint }).kickoff();
    await writing.promise;
    // The save of `prepare` is written in the background (JSON): forked once it is stored.
    const target = await storageTarget(location);
    while ((await target.provider.latest(location)) === undefined)
      await new Promise((resolve) => setTimeout(resolve, 5));
    await target.provider.close?.();
    const fork = await Desk.fork(
      { restoreFrom: location },
      { branch: 'try-2', bus: new EventBus(), checkpoint },
    );
    const forked = await fork.kickoff().catch((error: unknown) => error);
    gate.open();
    await original;
    expect(forked).toMatchObject({ status: 'completed', state: { prepared: true, text: 'done' } });
    expect(runs).toEqual(['Report.write', 'Report.write']);
  });
});

describe('a run continuing a fork of a parent while the original parent runs the child', () => {
  it("runs the child again on the fork's branch (it claims nothing)", async () => {
    const location = freshLocation('sqlite');
    const gate = signal();
    const writing = signal();
    const runs: string[] = [];
    let failDelegate = false;
    @persist({ location })
    class Report extends Flow<{ id?: string; text: string }> {
      initialState = { text: '' };
      @start() async write() {
        runs.push('Report.write');
        writing.open();
        if (runs.length === 1) await gate.promise;
        this.state.text = 'done';
      }
    }
    class Desk extends Flow<{ prepared: boolean; text: string }> {
      initialState = { prepared: false, text: '' };
      @start() prepare() {
        this.state.prepared = true;
      }
      @listen('prepare') async delegate() {
        if (failDelegate) throw new Error('the fork stops here the first time');
        const result = await new Report().kickoff({ inputs: { id: 'report-1' } });
        this.state.text = result.state.text;
      }
    }
    const checkpoint = { location, onEvents: ['*' as const] };
    const original = new Desk({ bus: new EventBus(), checkpoint }).kickoff();
    await writing.promise;
    // A fork that failed, continued later from its own branch while the original still runs the child.
    failDelegate = true;
    const forkBus = new EventBus();
    const saved: string[] = [];
    forkBus.on(CheckpointCompletedEvent, (_source: unknown, event: CheckpointCompletedEvent) => {
      saved.push(event.reference);
    });
    const fork = await Desk.fork({ restoreFrom: location }, { branch: 'try-2', bus: forkBus, checkpoint });
    await expect(fork.kickoff()).rejects.toThrow('the fork stops here the first time');
    failDelegate = false;
    const continued = await Desk.fromCheckpoint(
      { restoreFrom: saved.at(-1)! },
      { bus: new EventBus(), checkpoint },
    );
    const result = await continued.kickoff().catch((error: unknown) => error);
    gate.open();
    await original;
    expect(result).toMatchObject({ status: 'completed', state: { text: 'done' } });
    expect(runs).toEqual(['Report.write', 'Report.write']);
  });
});

describe('the refusal of a state held in this process', () => {
  it.each(['sqlite', 'json'] as const)(
    'names the state, the holder as this process, and no lineage id (%s)',
    async (store) => {
      const location = freshLocation(store);
      const gate = signal();
      const inside = signal();
      @persist({ location })
      class Report extends Flow<{ id?: string; n: number }> {
        initialState = { n: 0 };
        @start() async one() {
          inside.open();
          await gate.promise;
          this.state.n += 1;
        }
      }
      class Desk extends Flow<{ n: number }> {
        initialState = { n: 0 };
        @start() async go() {
          await new Report().kickoff({ inputs: { id: 'r-1' } });
        }
      }
      const first = new Desk({ bus: new EventBus() }).kickoff();
      await inside.promise;
      const nested = await new Desk({ bus: new EventBus() }).kickoff().catch((error: unknown) => error);
      const root = await new Report({ bus: new EventBus() })
        .kickoff({ inputs: { id: 'r-1' } })
        .catch((error: unknown) => error);
      gate.open();
      await first;
      const holder = `flow Report in flow Desk on ${hostname()}, pid ${process.pid} (this process)`;
      const lineageId = stateLineageId('Report', 'r-1');
      expect(nested).toMatchObject({ code: 'conflict', details: { lineageId, stateId: 'r-1' } });
      expect((nested as Error).message).toMatch(
        new RegExp(
          `^\\[flow\\] flow "Report": state "r-1" is being run by ${literally(holder)}, whose lease has [0-9.]+ s left; wait for that kickoff to end, then kick off state "r-1" again$`,
        ),
      );
      // Kicked off by its id: the state has no save yet, so no fork of one is offered.
      expect(root).toMatchObject({ code: 'conflict', details: { lineageId, stateId: 'r-1' } });
      expect((root as Error).message).toMatch(
        new RegExp(
          `^\\[flow\\] flow "Report": state "r-1" is being run by ${literally(holder)}, whose lease has [0-9.]+ s left; wait for that kickoff to end, then kick off state "r-1" again to continue from its latest save$`,
        ),
      );
    },
  );
});

function literally(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
