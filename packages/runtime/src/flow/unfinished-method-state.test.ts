import { EventBus, MethodExecutionFinishedEvent } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Flow, listen, start } from './index.js';

// Changes of a method execution that did not complete are not saved, also when another method,
// running at the same time, completes meanwhile: a resume runs the unfinished method again against
// the state as it was before it started, not on top of its own half-done changes.

const ran: string[] = [];
let failing = true;
/** What the slow method waits for before it completes (each test sets it). */
let quickFinished: Promise<void> = Promise.resolve();

afterEach(() => {
  ran.length = 0;
  failing = true;
  quickFinished = Promise.resolve();
});

class SlowAndQuick extends Flow<{ attempts: number; slow: string; quick: string }> {
  initialState = { attempts: 0, slow: '', quick: '' };
  @start() begin() {
    ran.push('begin');
    return 'go';
  }
  @listen('begin') async slow() {
    ran.push('slow');
    this.state.attempts += 1;
    await quickFinished;
    this.state.slow = 'done';
    return 'slow';
  }
  @listen('begin') async quick() {
    ran.push('quick');
    await Promise.resolve();
    this.state.quick = 'done';
    return 'quick';
  }
}

class Charge extends Flow<{ charges: number; report: string }> {
  initialState = { charges: 0, report: '' };
  @start() begin() {
    return 'go';
  }
  @listen('begin') async charge() {
    this.state.charges += 1;
    if (failing) throw new Error('card declined');
    return 'charged';
  }
  @listen('begin') async report() {
    // Still running when `charge` throws; completes afterwards.
    await new Promise((resolve) => setTimeout(resolve, 10));
    this.state.report = 'done';
    return 'reported';
  }
}

describe('the state saved when a method completes', () => {
  it('leaves out what a method still running changed; a resume runs it once more from before', async () => {
    const provider = new InMemoryProvider();
    const bus = new EventBus();
    // The slow method goes on once the quick one has completed (and its checkpoint was taken).
    quickFinished = new Promise((resolve) => {
      bus.on(MethodExecutionFinishedEvent, (_source: unknown, event: MethodExecutionFinishedEvent) => {
        if (event.methodName === 'quick') resolve();
      });
    });
    const flow = new SlowAndQuick({
      bus,
      checkpoint: { location: 'mem', provider, onEvents: ['method_execution_finished'] },
    });
    expect((await flow.kickoff()).state.attempts).toBe(1);
    const afterQuick = (await provider.list('mem'))[1]!;
    const saved = await readDocument(provider, 'mem', afterQuick.id);
    expect((saved.events.at(-1) as { methodName?: string }).methodName).toBe('quick');

    ran.length = 0;
    const restored = await SlowAndQuick.fromCheckpoint(
      { restoreFrom: `mem#${afterQuick.id}`, provider },
      { bus: new EventBus() },
    );
    quickFinished = Promise.resolve();
    const result = await restored.kickoff();
    expect(ran).toEqual(['slow']);
    expect(result.state).toMatchObject({ attempts: 1, slow: 'done', quick: 'done' });
  });

  it('leaves out what a failed method changed before it threw', async () => {
    const provider = new InMemoryProvider();
    await expect(
      new Charge({
        bus: new EventBus(),
        checkpoint: {
          location: 'mem',
          provider,
          onEvents: ['method_execution_finished', 'method_execution_failed'],
        },
      }).kickoff(),
    ).rejects.toThrow('card declined');
    // Written when `report` completed, after `charge` had failed.
    const latest = (await provider.list('mem')).at(-1)!;
    expect(latest.trigger).toBe('method_execution_finished');
    failing = false;
    const restored = await Charge.fromCheckpoint(
      { restoreFrom: `mem#${latest.id}`, provider },
      { bus: new EventBus() },
    );
    const resumed = await restored.kickoff();
    expect(resumed.status).toBe('completed');
    expect(resumed.state).toMatchObject({ charges: 1, report: 'done' });
  });
});
