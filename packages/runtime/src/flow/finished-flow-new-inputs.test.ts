// A finished flow continued with inputs that change its state has something new to store: a resume
// at the finished end writes nothing (fdd6734), but the state the kickoff returns with the inputs
// merged must be what the next kickoff by id (or resume) finds. A fork's end is its branch's first
// checkpoint, whatever it continues.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import type { CheckpointConfigInput } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { Flow, listen, persist, start } from './index.js';

const root = mkdtempSync(join(tmpdir(), 'crewline-finished-inputs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let directoryCounter = 0;
function freshLocation(): string {
  directoryCounter += 1;
  return join(root, `states-${directoryCounter}`);
}

interface CounterState {
  value: number;
  note: string;
}

class Counter extends Flow<CounterState> {
  initialState = { value: 0, note: '' };
  @start() increment() {
    this.state.value += 1;
    return this.state.value;
  }
  @listen('increment') report(value: number) {
    return `value is ${value}`;
  }
}

function persistedCounter(location: string) {
  @persist({ location })
  class PersistedCounter extends Counter {}
  return PersistedCounter;
}

const jsonProvider = new JsonProvider();
const triggersAt = async (location: string) =>
  (await jsonProvider.list(jsonProvider.resolveLocation(location))).map((checkpoint) => checkpoint.trigger);

describe('a finished persisted flow kicked off again by id', () => {
  for (const [setting, checkpoint] of [
    ['@persist alone', undefined],
    ["checkpointing on '*'", { onEvents: ['*'] }],
  ] as const) {
    it(`with new inputs stores the state it returns (${setting})`, async () => {
      const location = freshLocation();
      const PersistedCounter = persistedCounter(location);
      const options = () => ({
        bus: new EventBus(),
        ...(checkpoint ? { checkpoint: { ...checkpoint, location } as CheckpointConfigInput } : {}),
      });
      await new PersistedCounter(options()).kickoff({ inputs: { id: 'state-1' } });
      const before = await triggersAt(location);

      const again = await new PersistedCounter(options()).kickoff({
        inputs: { id: 'state-1', note: 'second' },
      });
      expect(again.state).toMatchObject({ value: 1, note: 'second' });
      expect((await triggersAt(location)).slice(before.length)).toEqual(['flow_finished']);
      expect(again.checkpoint).toBeDefined();

      const third = await new PersistedCounter(options()).kickoff({ inputs: { id: 'state-1' } });
      expect(third.state).toMatchObject({ value: 1, note: 'second' });
      // Inputs its state holds already are nothing new: no checkpoint, however often.
      const stored = await triggersAt(location);
      const same = await new PersistedCounter(options()).kickoff({
        inputs: { id: 'state-1', note: 'second' },
      });
      expect(same.checkpoint).toBeUndefined();
      expect(await triggersAt(location)).toEqual(stored);
    });
  }
});

describe('a finished flow restored from its checkpoint', () => {
  async function finishedRun(provider: InMemoryProvider) {
    const checkpoint = { location: 'mem', provider, onEvents: ['*' as const] };
    await new Counter({ bus: new EventBus(), checkpoint }).kickoff();
    return provider.list('mem');
  }

  it('kicked off with new inputs stores them; the next resume finds them', async () => {
    const provider = new InMemoryProvider();
    const saved = await finishedRun(provider);
    const restored = await Counter.fromCheckpoint({ restoreFrom: 'mem', provider }, { bus: new EventBus() });
    const result = await restored.kickoff({ inputs: { note: 'edited' } });
    expect(result.state).toMatchObject({ value: 1, note: 'edited' });
    const after = await provider.list('mem');
    expect(after.slice(saved.length).map((checkpoint) => checkpoint.trigger)).toEqual(['flow_finished']);
    expect(result.checkpoint).toBe(after.at(-1)!.reference);

    const again = await Counter.fromCheckpoint({ restoreFrom: 'mem', provider }, { bus: new EventBus() });
    const resumed = await again.kickoff();
    expect(resumed.state).toMatchObject({ value: 1, note: 'edited' });
    expect(await provider.list('mem')).toEqual(after);
  });

  it('forked, writes its end on the new branch, naming the checkpoint it was forked from', async () => {
    const provider = new InMemoryProvider();
    const saved = await finishedRun(provider);
    const fork = await Counter.fork(
      { restoreFrom: 'mem', provider },
      { bus: new EventBus(), branch: 'experiment' },
    );
    const result = await fork.kickoff();
    const added = (await provider.list('mem')).slice(saved.length);
    expect(added.map((checkpoint) => [checkpoint.trigger, checkpoint.branch])).toEqual([
      ['flow_finished', 'experiment'],
    ]);
    expect(added[0]!.parentId).toBe(saved.at(-1)!.id);
    expect(result.checkpoint).toBe(added[0]!.reference);
  });
});
