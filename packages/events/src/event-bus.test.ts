import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BaseEvent } from './base-event.js';
import { EventBus, type RunState } from './event-bus.js';
import { TaskCompletedEvent, TaskStartedEvent } from './event-classes/crew-events.js';
import { LLMCallCompletedEvent } from './event-classes/llm-events.js';
import { setLogSink } from './logger.js';

class FakeState implements RunState {
  readonly events: BaseEvent[] = [];
  constructor(readonly runId: string) {}
  recordEvent(event: BaseEvent): void {
    event.sequence = this.events.length + 1;
    this.events.push(event);
  }
  checkpoint(): string {
    return `${this.runId}#${this.events.length}`;
  }
  async acheckpoint(): Promise<string> {
    return this.checkpoint();
  }
}

const completed = () => new TaskCompletedEvent({ description: 'Research', output: 'bullets' });

afterEach(() => setLogSink((record) => process.stderr.write(`${record.message}\n`)));

describe('EventBus', () => {
  it('passes (source, event) to two-parameter handlers and adds the run state for three', () => {
    const bus = new EventBus();
    const state = new FakeState('run-1');
    const two = vi.fn((_source: unknown, _event: TaskCompletedEvent) => {});
    const three = vi.fn((_source: unknown, _event: TaskCompletedEvent, _state: unknown) => {});
    bus.on(TaskCompletedEvent, two);
    bus.on(TaskCompletedEvent, three);
    const source = { name: 'crew' };
    bus.runInScope(state, () => bus.emit(source, completed()));
    expect(two).toHaveBeenCalledTimes(1);
    expect(two.mock.calls[0]).toHaveLength(2);
    expect(three.mock.calls[0]?.[0]).toBe(source);
    expect(three.mock.calls[0]?.[2]).toBe(state);
  });

  it('only calls handlers registered for the event type, and unsubscribes', () => {
    const bus = new EventBus();
    const handler = vi.fn();
    const off = bus.on(TaskStartedEvent, handler);
    bus.emit(null, completed());
    expect(handler).not.toHaveBeenCalled();
    bus.emit(null, new TaskStartedEvent({ description: 'x' }));
    off();
    bus.emit(null, new TaskStartedEvent({ description: 'x' }));
    expect(handler).toHaveBeenCalledTimes(1);
  });

  it('records events in the run they are emitted in, through async boundaries, never in another run', async () => {
    const bus = new EventBus();
    const first = new FakeState('first');
    const second = new FakeState('second');
    const runOne = bus.runInScope(first, async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      bus.emit(null, completed());
      await Promise.resolve();
      bus.emit(null, completed());
    });
    const runTwo = bus.runInScope(second, async () => {
      bus.emit(null, new TaskStartedEvent({ description: 'y' }));
      expect(bus.activeStates()).toEqual(expect.arrayContaining([first, second]));
    });
    await Promise.all([runOne, runTwo]);
    expect(first.events.map((event) => event.type)).toEqual(['task_completed', 'task_completed']);
    expect(first.events.map((event) => event.sequence)).toEqual([1, 2]);
    expect(second.events.map((event) => event.type)).toEqual(['task_started']);
    expect(bus.activeStates()).toEqual([]);
  });

  it('records nothing in a run once its scope has settled, even from a timer it started', async () => {
    const bus = new EventBus();
    const state = new FakeState('ended');
    const three = vi.fn((_source: unknown, _event: BaseEvent, _state: unknown) => {});
    const two = vi.fn((_source: unknown, _event: BaseEvent) => {});
    bus.onAny(three);
    bus.onAny(two);
    let timer: Promise<RunState | undefined> | undefined;
    await bus.runInScope(state, async () => {
      bus.emit(null, completed());
      timer = new Promise((resolve) =>
        setTimeout(() => {
          bus.emit(null, completed());
          resolve(bus.currentState());
        }, 5),
      );
    });
    expect(await timer).toBeUndefined();
    expect(state.events).toHaveLength(1);
    expect(three).toHaveBeenCalledTimes(1);
    expect(two).toHaveBeenCalledTimes(2);
  });

  it('skips three-parameter handlers outside a run and still calls two-parameter ones', () => {
    const bus = new EventBus();
    const three = vi.fn((_source: unknown, _event: BaseEvent, _state: unknown) => {});
    const two = vi.fn((_source: unknown, _event: BaseEvent) => {});
    bus.onAny(three);
    bus.onAny(two);
    bus.emit(null, completed());
    expect(three).not.toHaveBeenCalled();
    expect(two).toHaveBeenCalledTimes(1);
  });

  it('logs a failing handler and keeps calling the others, sync and async', async () => {
    const bus = new EventBus();
    const messages: string[] = [];
    setLogSink((record) => messages.push(record.message));
    const after = vi.fn();
    bus.on(TaskCompletedEvent, () => {
      throw new Error('boom');
    });
    bus.on(TaskCompletedEvent, async () => {
      throw new Error('async boom');
    });
    bus.on(TaskCompletedEvent, after);
    const result = bus.emit(null, completed());
    await result.settled;
    expect(after).toHaveBeenCalledTimes(1);
    expect(messages).toEqual([
      'handler for task_completed failed',
      'async handler for task_completed failed',
    ]);
  });

  it('emitAsync waits for async handlers such as acheckpoint', async () => {
    const bus = new EventBus();
    const state = new FakeState('run');
    const written: string[] = [];
    bus.on(LLMCallCompletedEvent, async (_source, _event, runState) => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      written.push(await runState.acheckpoint());
    });
    await bus.runInScope(state, () =>
      bus.emitAsync(null, new LLMCallCompletedEvent({ model: 'offline:test', callId: 'c1', response: 'ok' })),
    );
    expect(written).toEqual(['run#1']);
  });

  it('flush waits for every pending async handler', async () => {
    const bus = new EventBus();
    let done = 0;
    bus.onAny(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      done += 1;
    });
    expect(bus.hasPendingHandlers).toBe(false);
    bus.emit(null, completed());
    bus.emit(null, completed());
    expect(bus.hasPendingHandlers).toBe(true);
    await bus.flush();
    expect(done).toBe(2);
    expect(bus.hasPendingHandlers).toBe(false);
  });

  it('keeps instances isolated', () => {
    const one = new EventBus();
    const two = new EventBus();
    const handler = vi.fn();
    one.onAny(handler);
    two.emit(null, completed());
    expect(handler).not.toHaveBeenCalled();
  });
  it('never calls an onAny handler for the types it excepts, and calls it for the others', () => {
    const bus = new EventBus();
    const state = new FakeState('run-except');
    const seen: string[] = [];
    bus.onAny((_source: unknown, event: BaseEvent, _state: unknown) => void seen.push(event.type), {
      except: [TaskStartedEvent.type, LLMCallCompletedEvent.type],
    });
    bus.runInScope(state, () => {
      bus.emit(null, new TaskStartedEvent({ description: 'x' }));
      bus.emit(null, completed());
      bus.emit(null, new LLMCallCompletedEvent({ model: 'm', callId: 'c1', response: 'r' }));
    });
    expect(seen).toEqual(['task_completed']);
    // Excepted events are still recorded in the run: only the handler skips them.
    expect(state.events.map((event) => event.type)).toEqual([
      'task_started',
      'task_completed',
      'llm_call_completed',
    ]);
  });

  it('wants(type) says whether any handler would receive an event of that type', () => {
    const bus = new EventBus();
    expect(bus.wants('task_started')).toBe(false);
    const offExcepting = bus.onAny(() => undefined, { except: ['task_started'] });
    expect(bus.wants('task_started')).toBe(false);
    expect(bus.wants('task_completed')).toBe(true);
    const offTyped = bus.on(TaskStartedEvent, () => undefined);
    expect(bus.wants('task_started')).toBe(true);
    offTyped();
    expect(bus.wants('task_started')).toBe(false);
    const offAll = bus.onAny(() => undefined, { except: [] });
    expect(bus.wants('task_started')).toBe(true);
    offAll();
    offExcepting();
    expect(bus.wants('task_completed')).toBe(false);
  });
});
