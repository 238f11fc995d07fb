import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { afterAll, describe, expect, it } from 'vitest';
import { captureLogs } from '../testing/index.js';
import { Flow, listen, listFlowStates, persist, start } from './index.js';

const root = mkdtempSync(join(tmpdir(), 'crewline-persist-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let directoryCounter = 0;
function freshLocation(): string {
  directoryCounter += 1;
  return join(root, `states-${directoryCounter}`);
}

/** A class-level persisted flow whose third step fails while `failing` is set. */
function persistentCounter(location: string) {
  const calls: string[] = [];
  const control = { failing: false };
  @persist({ location })
  class PersistentCounter extends Flow<{ value: number }> {
    initialState = { value: 0 };

    @start() increment() {
      calls.push('increment');
      this.state.value += 1;
      return this.state.value;
    }

    @listen('increment') double(value: number) {
      calls.push('double');
      this.state.value = value * 2;
      return this.state.value;
    }

    @listen('double') report(value: number) {
      calls.push('report');
      if (control.failing) throw new Error('network down');
      return `value is ${value}`;
    }
  }
  return { PersistentCounter, calls, control };
}

describe('@persist()', () => {
  it('saves state after each method and kickoff({ inputs: { id } }) skips completed methods', async () => {
    const location = freshLocation();
    const { PersistentCounter, calls, control } = persistentCounter(location);
    control.failing = true;
    await expect(
      new PersistentCounter({ bus: new EventBus() }).kickoff({ inputs: { id: 'my-unique-id' } }),
    ).rejects.toThrow('network down');
    expect(calls).toEqual(['increment', 'double', 'report']);

    const provider = new JsonProvider();
    const saved = await provider.list(provider.resolveLocation(location));
    expect(saved.map((checkpoint) => checkpoint.trigger)).toEqual([
      'method_execution_finished',
      'method_execution_finished',
    ]);
    expect(saved.every((checkpoint) => checkpoint.branch === 'flow-states/my-unique-id')).toBe(true);

    calls.length = 0;
    control.failing = false;
    const result = await new PersistentCounter({ bus: new EventBus() }).kickoff({
      inputs: { id: 'my-unique-id' },
    });
    expect(calls).toEqual(['report']);
    expect(result.state.value).toBe(2);
    expect(result.output).toBe('value is 2');
    expect(result.completedMethods).toEqual(['increment', 'double', 'report']);

    calls.length = 0;
    const again = await new PersistentCounter({ bus: new EventBus() }).kickoff({
      inputs: { id: 'my-unique-id' },
    });
    expect(calls).toEqual([]);
    expect(again.output).toBe('value is 2');
  });

  it('starts fresh under a given id that has no saved state, and lists states from code and from the CLI function', async () => {
    const location = freshLocation();
    const { PersistentCounter } = persistentCounter(location);
    await new PersistentCounter({ bus: new EventBus() }).kickoff({ inputs: { id: 'first-run' } });
    const generated = await new PersistentCounter({ bus: new EventBus() }).kickoff();
    const states = await PersistentCounter.listStates();
    expect(states.map((state) => state.id).sort()).toEqual(['first-run', generated.stateId].sort());
    const first = states.find((state) => state.id === 'first-run');
    expect(first).toMatchObject({
      flowName: 'PersistentCounter',
      lastMethod: 'report',
      status: 'completed',
      checkpoints: 3,
    });
    expect(first?.reference).toContain('flow-states');
    expect(Date.parse(first?.updatedAt ?? '')).not.toBeNaN();

    const fromCli = await listFlowStates(location);
    expect(fromCli).toEqual(states);
    expect(await Flow.listStates({ location })).toEqual(states);
    expect(await listFlowStates(location, { flowName: 'Other' })).toEqual([]);
    expect(await listFlowStates(join(root, 'does-not-exist'))).toEqual([]);
  });

  it('on a method, persists after that method only', async () => {
    const location = freshLocation();
    class Partial extends Flow<{ steps: number }> {
      initialState = { steps: 0 };
      @start() one() {
        this.state.steps += 1;
        return 1;
      }
      @persist({ location })
      @listen('one')
      two() {
        this.state.steps += 1;
        return 2;
      }
      @listen('two') three() {
        this.state.steps += 1;
        return 3;
      }
    }
    await new Partial({ bus: new EventBus() }).kickoff({ inputs: { id: 'partial' } });
    const [state] = await listFlowStates(location);
    expect(state).toMatchObject({ id: 'partial', lastMethod: 'two', checkpoints: 1 });
  });

  it('writes into the flow checkpoint location without duplicating checkpoints the config already writes', async () => {
    const location = freshLocation();
    @persist()
    class Both extends Flow {
      @start() one() {
        return 1;
      }
      @listen('one') two() {
        return 2;
      }
    }
    await new Both({
      bus: new EventBus(),
      checkpoint: { location, onEvents: ['method_execution_finished'] },
    }).kickoff({
      inputs: { id: 'both' },
    });
    const provider = new JsonProvider();
    const saved = await provider.list(provider.resolveLocation(location));
    expect(saved).toHaveLength(2);
    expect(saved.every((checkpoint) => checkpoint.branch === 'flow-states/both')).toBe(true);
  });

  // Trial (flows) 5: the config's location won without a word, and listStates() found nothing.
  it('says so when a checkpoint config sends the states elsewhere than @persist({ location })', async () => {
    const named = freshLocation();
    const configured = freshLocation();
    const { PersistentCounter } = persistentCounter(named);
    const logs = captureLogs();
    try {
      await new PersistentCounter({
        bus: new EventBus(),
        checkpoint: { location: configured, onEvents: ['method_execution_finished'] },
      }).kickoff({ inputs: { id: 'elsewhere' } });
      await new PersistentCounter({
        bus: new EventBus(),
        checkpoint: {
          location: `${named}/../${named.split('/').pop()}`,
          onEvents: ['method_execution_finished'],
        },
      }).kickoff({ inputs: { id: 'same-place' } });
      const warnings = logs.expect('takes the place of');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.level).toBe('warn');
      expect(warnings[0]?.message).toContain(
        `location ${configured} takes the place of the one @persist({ location }) names`,
      );
    } finally {
      logs.stop();
    }
    expect(await listFlowStates(named)).toMatchObject([{ id: 'same-place' }]);
    expect(await listFlowStates(configured)).toMatchObject([{ id: 'elsewhere' }]);
  });

  it('keeps ids that are not safe as branch names findable', async () => {
    const location = freshLocation();
    const { PersistentCounter, calls, control } = persistentCounter(location);
    control.failing = true;
    await expect(
      new PersistentCounter({ bus: new EventBus() }).kickoff({ inputs: { id: 'user 7/report' } }),
    ).rejects.toThrow();
    calls.length = 0;
    control.failing = false;
    await new PersistentCounter({ bus: new EventBus() }).kickoff({ inputs: { id: 'user 7/report' } });
    expect(calls).toEqual(['report']);
    const [state] = await PersistentCounter.listStates();
    expect(state?.id).toBe('user 7/report');
    expect(state?.branch).toMatch(/^flow-states\/user-7-report-[0-9a-f]{10}$/);
  });

  it('persists into a SQLite database when the location is a .db file', async () => {
    const location = join(root, 'states.db');
    const { PersistentCounter, calls, control } = persistentCounter(location);
    control.failing = true;
    await expect(
      new PersistentCounter({ bus: new EventBus() }).kickoff({ inputs: { id: 'in-sqlite' } }),
    ).rejects.toThrow();
    const [state] = await listFlowStates(location);
    expect(state).toMatchObject({ id: 'in-sqlite', lastMethod: 'double' });
    expect(state?.reference).toContain('states.db#');
    calls.length = 0;
    control.failing = false;
    const result = await new PersistentCounter({ bus: new EventBus() }).kickoff({
      inputs: { id: 'in-sqlite' },
    });
    expect(calls).toEqual(['report']);
    expect(result.output).toBe('value is 2');
  });

  it('restores an id written into initialState without passing inputs.id', async () => {
    const location = freshLocation();
    const runs: string[] = [];
    @persist({ location })
    class Fixed extends Flow<{ value: number }> {
      initialState = { id: 'my-unique-id', value: 0 };
      @start() increment() {
        runs.push('increment');
        this.state.value += 1;
        return this.state.value;
      }
    }
    const flow = new Fixed({ bus: new EventBus() });
    expect(flow.state.id).toBe('my-unique-id');
    await flow.kickoff();
    const again = await new Fixed({ bus: new EventBus() }).kickoff();
    expect(runs).toEqual(['increment']);
    expect(again.stateId).toBe('my-unique-id');
    expect(again.state.value).toBe(1);
  });

  it('rejects unknown options', () => {
    expect(() => persist({ key: 'x' } as never)).toThrow(/unknown option "key"/);
  });
});
