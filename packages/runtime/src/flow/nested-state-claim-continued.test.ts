// Review r-wave2 of 058f3ce (a nested @persist() kickoff claims its state's lineage head):
// - a root kickoff continuing a nested save other than by the state id (`Flow.resume({ id }, answer)`,
//   `fromCheckpoint(...).kickoff()`) claimed nothing of the state: a nested kickoff of the same state
//   in another parent ran beside it and paid for its methods;
// - a fork of a parent, made while the original parent runs the child, was refused (a fork is meant
//   to run again on its own branch: it claims nothing of the child's state);
// - the refusal led with a lineage id nobody gave, said a nested holder "continued" the state,
//   offered a fork of a save the state did not have, and did not say the holder was this process.
// Review r-wave3c of bc405ed:
// - resuming the pause a fork's nested kickoff left (a save on the fork's branch) claimed the
//   state's head, though the fork's kickoff had claimed nothing: refused while the original parent
//   ran the child, and, held, it refused a parent run's nested kickoff of the state;
// - a refused `Flow.resume({ id }, answer)` said to continue "that checkpoint" (the user gave an id).
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

describe("a resume of a fork's nested pause while the original parent runs the child", () => {
  // Review r-wave3c: the fork's own nested kickoff of the state claimed nothing, but resuming the
  // pause it left (a save on the fork's branch) claimed the state's head: refused while the original
  // parent ran the child, and, the other way round, it would have failed the original's method.
  it.each(['sqlite', 'json'] as const)("continues the fork's save and claims nothing (%s)", async (store) => {
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
      }
      @listen('write') async check() {
        if (runs.length >= 2) this.state.text = await this.ask('ok?');
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
    const checkpoint = { location, onEvents: ['*' as const] };
    const original = new Desk({ bus: new EventBus(), checkpoint }).kickoff();
    await writing.promise;
    const target = await storageTarget(location);
    while ((await target.provider.latest(location)) === undefined)
      await new Promise((resolve) => setTimeout(resolve, 5));
    await target.provider.close?.();
    const fork = await Desk.fork(
      { restoreFrom: location },
      { branch: 'try-2', bus: new EventBus(), checkpoint },
    );
    // The fork's child asks: it pauses on the fork's branch (the fork's Desk goes on without it).
    await fork.kickoff();
    const resumed = await Report.resume({ id: 'report-1' }, 'yes', { bus: new EventBus() }).catch(
      (error: unknown) => error,
    );
    gate.open();
    expect((await original).status).toBe('completed');
    expect(resumed).toMatchObject({ status: 'completed', state: { text: 'yes' } });
    // The fork's child was continued: `write` ran in the original and in the fork, not a third time.
    expect(runs).toEqual(['Report.write', 'Report.write']);
  });
});

describe("a parent run kicking off a state while a resume of a fork's nested pause runs it", () => {
  it.each(['sqlite', 'json'] as const)(
    'is not refused: the resume holds nothing of the state (%s)',
    async (store) => {
      const location = freshLocation(store);
      const gate = signal();
      const publishing = signal();
      const runs: string[] = [];
      @persist({ location })
      class Report extends Flow<{ id?: string; text: string }> {
        initialState = { text: '' };
        @start() async check() {
          runs.push('Report.check');
          // The original asks nothing; every later kickoff asks (the fork's child pauses on it).
          if (runs.length >= 2) this.state.text = await this.ask('ok?');
        }
        @listen('check') async publish() {
          if (this.state.text === 'yes') {
            publishing.open();
            await gate.promise;
          }
        }
      }
      class Desk extends Flow<{ prepared: boolean; text: string }> {
        initialState = { prepared: false, text: '' };
        @start() prepare() {
          this.state.prepared = true;
        }
        @listen('prepare') async delegate() {
          this.state.text = (await new Report().kickoff({ inputs: { id: 'report-1' } })).state.text;
        }
      }
      const checkpoint = { location, onEvents: ['*' as const] };
      // The original parent's save after `prepare`, forked once the original has ended.
      const originalBus = new EventBus();
      let prepared: string | undefined;
      originalBus.on(CheckpointCompletedEvent, (_source: unknown, event: CheckpointCompletedEvent) => {
        if (event.trigger === 'method_execution_finished') prepared ??= event.reference;
      });
      await new Desk({ bus: originalBus, checkpoint }).kickoff();
      const fork = await Desk.fork(
        { restoreFrom: prepared! },
        { branch: 'try-2', bus: new EventBus(), checkpoint },
      );
      await fork.kickoff();
      const resumed = Report.resume({ id: 'report-1' }, 'yes', { bus: new EventBus() });
      await publishing.promise;
      const original = await new Desk({ bus: new EventBus() }).kickoff().catch((error: unknown) => error);
      gate.open();
      expect(await resumed).toMatchObject({ status: 'completed', state: { text: 'yes' } });
      expect(original).toMatchObject({ status: 'completed' });
      // The original's, the fork's, the resume's and the new parent run's (which pauses on the question).
      expect(runs).toHaveLength(4);
    },
  );
});

describe('the refusal of a resume by state id', () => {
  it.each(['sqlite', 'json'] as const)('says to resume the state again (%s)', async (store) => {
    const location = freshLocation(store);
    const gate = signal();
    const publishing = signal();
    @persist({ location })
    class Asking extends Flow<{ id?: string; answer: string }> {
      initialState = { answer: '' };
      @start() async question() {
        this.state.answer = await this.ask('Go on?');
      }
      @listen('question') async publish() {
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
    await new Parent({ bus: new EventBus(), checkpoint: { location, onEvents: ['*'] } }).kickoff();
    // Two resumes of the nested pause at once, both by the state id: both read the paused save, the
    // one that claims the state first runs (held in `publish`), the other is refused.
    const outcomes = [
      Asking.resume({ id: 'asking-state' }, 'yes', { bus: new EventBus() }),
      Asking.resume({ id: 'asking-state' }, 'no', { bus: new EventBus() }),
    ].map((outcome) => outcome.catch((error: unknown) => error));
    await publishing.promise;
    const second = await Promise.race(outcomes);
    gate.open();
    await Promise.all(outcomes);
    expect(second).toMatchObject({ code: 'conflict', details: { stateId: 'asking-state' } });
    expect((second as Error).message).toMatch(
      /; wait for that kickoff to end, then resume state "asking-state" again, or fork its latest save instead \(Asking\.fork\(\{ restoreFrom \}\), under a new state id\)$/,
    );
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
