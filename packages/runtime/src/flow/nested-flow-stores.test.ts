// What a flow kicked off in another flow's method gives back and saves, under the outer run's
// setting: its @persist saves reach its own store unless the run's automatic write goes to that
// very store (two in-memory providers given one location name are two stores), its result names
// the checkpoints taken while it ran (not a sibling method's, taken while it waited for the run's
// writes), and a nested flow that took none does not wait for the outer run's writes at all.
import { EventBus, FlowFinishedEvent } from '@crewline/events';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Flow, listen, persist, start } from './index.js';

/** An in-memory store written in the background only, whose writes wait until `open()`. */
function gatedStore(): { provider: CheckpointProvider; inner: InMemoryProvider; open: () => void } {
  const inner = new InMemoryProvider();
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const provider = new Proxy(inner, {
    get(target, key) {
      if (key === 'writeSync' || key === 'writeBatch') return undefined;
      if (key === 'capabilities') return { syncWrite: false, incremental: false, leases: false };
      if (key === 'write')
        return async (location: string, checkpoint: never) => {
          await gate;
          return target.write(location, checkpoint);
        };
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as unknown as CheckpointProvider;
  return { provider, inner, open };
}

describe('a flow kicked off in another flow', () => {
  it('saves its @persist state to its own in-memory store when the outer run writes to another one of the same location name', async () => {
    const outerStore = new InMemoryProvider();
    const innerStore = new InMemoryProvider();
    @persist({ location: 'memory', provider: innerStore })
    class Inner extends Flow<{ steps: number }> {
      initialState = { steps: 0 };
      @start() first() {
        this.state.steps += 1;
        return 'first';
      }
    }
    class Outer extends Flow<{ done: boolean }> {
      initialState = { done: false };
      @start() async delegate() {
        await new Inner().kickoff({ inputs: { id: 'inner-state' } });
        this.state.done = true;
        return 'done';
      }
    }
    await new Outer({
      bus: new EventBus(),
      checkpoint: { location: 'memory', provider: outerStore, onEvents: ['*'] },
    }).kickoff();
    expect((await innerStore.list('memory')).map((checkpoint) => checkpoint.trigger)).toContain(
      'method_execution_finished',
    );
  });

  it("names its own end in its result, not a sibling method's checkpoint taken while it waited for the run's writes", async () => {
    const { provider, inner, open } = gatedStore();
    const bus = new EventBus();
    let innerEnded!: () => void;
    const innerEnd = new Promise<void>((resolve) => {
      innerEnded = resolve;
    });
    bus.on(FlowFinishedEvent, (_source, event) => {
      if (event.flowName === 'Inner') innerEnded();
    });
    let innerCheckpoint: string | undefined;
    class Inner extends Flow<{ steps: number }> {
      initialState = { steps: 0 };
      @start() first() {
        return 'first';
      }
    }
    class Outer extends Flow<{ ticks: number }> {
      initialState = { ticks: 0 };
      @start() async delegate() {
        innerCheckpoint = (await new Inner({ bus }).kickoff()).checkpoint;
        return 'done';
      }
      // Finishes a step (a checkpoint taken) once the inner flow has ended and is waiting for the
      // run's writes, which the closed gate holds back until this method's follower opens it.
      @start() async sibling() {
        await innerEnd;
        await new Promise((resolve) => setTimeout(resolve, 50));
        return 'sibling';
      }
      @listen('sibling') after() {
        open();
        return 'after';
      }
    }
    await new Outer({ bus, checkpoint: { location: 'gated', provider, onEvents: ['*'] } }).kickoff();
    const innerFinished = (await inner.list('gated')).filter(
      (checkpoint) => checkpoint.trigger === 'flow_finished',
    );
    expect(innerCheckpoint).toBeDefined();
    expect(innerFinished.map((checkpoint) => checkpoint.reference)).toContain(innerCheckpoint);
  });

  it("with checkpoint: false returns without waiting for the outer run's writes", async () => {
    const { provider, open } = gatedStore();
    let outcome: string | undefined;
    class Inner extends Flow<{ steps: number }> {
      initialState = { steps: 0 };
      @start() first() {
        return 'first';
      }
    }
    class Outer extends Flow<{ done: boolean }> {
      initialState = { done: false };
      @start() async delegate() {
        try {
          // The outer run's writes wait for the gate: a kickoff waiting for them never returns.
          outcome = await Promise.race([
            new Inner({ checkpoint: false }).kickoff().then(() => 'returned'),
            new Promise<string>((resolve) => setTimeout(() => resolve('waited'), 3000)),
          ]);
        } finally {
          open();
        }
        return 'done';
      }
    }
    await new Outer({
      bus: new EventBus(),
      checkpoint: { location: 'gated', provider, onEvents: ['*'] },
    }).kickoff();
    expect(outcome).toBe('returned');
  });
});
