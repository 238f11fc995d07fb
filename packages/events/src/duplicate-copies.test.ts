import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duplicateCopiesMessage } from './duplicate-copies.js';
import * as first from './index.js';

type EventsModule = typeof first;

const temporary: string[] = [];
const warnings: string[] = [];

/**
 * Another copy of this package, as a second install puts it in another node_modules: the same sources
 * in another directory, so the process evaluates them again as separate modules.
 */
async function loadCopy(): Promise<{ module: EventsModule; location: string }> {
  const location = await mkdtemp(join(tmpdir(), 'crewline-events-copy-'));
  temporary.push(location);
  await cp(fileURLToPath(new URL('.', import.meta.url)), join(location, 'src'), {
    recursive: true,
    filter: (path) => !path.endsWith('.test.ts'),
  });
  const module = (await import(pathToFileURL(join(location, 'src', 'index.ts')).href)) as EventsModule;
  return { module, location };
}

let second: EventsModule;
let secondLocation: string;

beforeAll(async () => {
  first.setLogSink((record) => {
    if (record.component === 'events') warnings.push(record.message);
  });
  ({ module: second, location: secondLocation } = await loadCopy());
});

afterAll(async () => {
  first.setLogSink(null);
  await Promise.all(temporary.map((path) => rm(path, { recursive: true, force: true })));
});

describe('two copies of @crewline/events in one process', () => {
  it('are really two copies: two EventBus classes, two event classes', () => {
    expect(second.EventBus).not.toBe(first.EventBus);
    expect(second.TaskCompletedEvent).not.toBe(first.TaskCompletedEvent);
  });

  it('share one bus: a handler registered through one copy receives events emitted through the other', async () => {
    const received: unknown[] = [];
    const offFirst = first.eventBus.on(first.TaskCompletedEvent, (_source, event) => {
      received.push(event);
    });
    const offSecond = second.eventBus.on(second.LLMCallCompletedEvent, (_source, event) => {
      received.push(event);
    });
    try {
      const fromSecond = new second.TaskCompletedEvent({ description: 'Research', output: 'bullets' });
      second.eventBus.emit({ kind: 'task' }, fromSecond);
      const fromFirst = new first.LLMCallCompletedEvent({
        model: 'offline',
        callId: 'call-1',
        response: 'ok',
      });
      await first.eventBus.emitAsync({ kind: 'llm' }, fromFirst);
      expect(received).toEqual([fromSecond, fromFirst]);
    } finally {
      offFirst();
      offSecond();
    }
  });

  it('share the run scope: a three-parameter handler of one copy gets the run entered through the other', () => {
    const states: unknown[] = [];
    const off = first.eventBus.on(first.TaskCompletedEvent, (_source, _event, state) => {
      states.push(state);
    });
    const recorded: string[] = [];
    const run = {
      runId: 'run-1',
      recordEvent: (event: { type: string }) => recorded.push(event.type),
      checkpoint: () => 'ref',
      acheckpoint: async () => 'ref',
    };
    try {
      second.eventBus.runInScope(run, () =>
        second.eventBus.emit(
          { kind: 'task' },
          new second.TaskCompletedEvent({ description: 'd', output: 'o' }),
        ),
      );
      expect(states).toEqual([run]);
      expect(recorded).toEqual(['task_completed']);
      expect(first.eventBus.currentState()).toBeUndefined();
    } finally {
      off();
    }
  });

  it('recognise each other’s errors: instanceof, isInstance and hasCode work across copies', () => {
    const fromSecond = new second.CrewlineError('test', 'not_found', 'no such checkpoint');
    const fromFirst = new first.CrewlineError('test', 'conflict', 'held elsewhere');
    expect(fromSecond instanceof first.CrewlineError).toBe(true);
    expect(fromFirst instanceof second.CrewlineError).toBe(true);
    expect(new Error('plain') instanceof second.CrewlineError).toBe(false);
    expect(first.CrewlineError.isInstance(fromSecond)).toBe(true);
    expect(second.CrewlineError.isInstance(fromFirst)).toBe(true);
    expect(first.CrewlineError.hasCode(fromSecond, 'not_found')).toBe(true);
    expect(second.CrewlineError.hasCode(fromFirst, 'not_found')).toBe(false);
    expect(first.CrewlineError.isInstance(new Error('plain'))).toBe(false);
  });

  it('keep ordinary instanceof for subclasses: only the base class goes by the brand', () => {
    class FirstSubclass extends first.CrewlineError {}
    class SecondSubclass extends second.CrewlineError {}
    const base = new second.CrewlineError('test', 'conflict', 'held elsewhere');
    const fromFirstSubclass = new FirstSubclass('test', 'conflict', 'held elsewhere');
    expect(base instanceof FirstSubclass).toBe(false);
    expect(fromFirstSubclass instanceof FirstSubclass).toBe(true);
    expect(fromFirstSubclass instanceof SecondSubclass).toBe(false);
    expect(fromFirstSubclass instanceof second.CrewlineError).toBe(true);
    expect(new SecondSubclass('test', 'conflict', 'x') instanceof first.CrewlineError).toBe(true);
  });

  it('share the logger settings: a sink set through one copy receives what the other logs', () => {
    const records: string[] = [];
    second.setLogSink((record) => records.push(record.message));
    first.logger.warn('test', 'from the first copy');
    second.logger.warn('test', 'from the second copy');
    first.setLogSink(null);
    second.logger.warn('test', 'silenced through the first copy');
    expect(records).toEqual(['from the first copy', 'from the second copy']);
  });

  it('warn once, naming both places and how to dedupe; a third copy adds no second warning', async () => {
    expect(warnings).toHaveLength(1);
    const firstLocation = fileURLToPath(new URL('..', import.meta.url));
    expect(warnings[0]).toContain('copies of @crewline/events are installed');
    expect(warnings[0]).toContain(firstLocation);
    expect(warnings[0]).toContain(secondLocation);
    expect(warnings[0]).toContain('they share one event bus');
    expect(warnings[0]).toMatch(/npm ls @crewline\/events.*npm dedupe/);
    first.setLogSink((record) => {
      if (record.component === 'events') warnings.push(record.message);
    });
    const third = await loadCopy();
    expect(third.module.eventBus).toBe(first.eventBus);
    expect(warnings).toHaveLength(1);
  });
});

describe('duplicateCopiesMessage', () => {
  it('says when copies cannot share a bus', () => {
    const message = duplicateCopiesMessage([
      { location: '/a/node_modules/@crewline/events/', busKey: 'crewline.event-bus.v1' },
      { location: '/b/node_modules/@crewline/events/', busKey: 'crewline.event-bus.v2' },
    ]);
    expect(message).toContain(
      'handlers registered through one do not receive events emitted through the other',
    );
    expect(message).toContain('/a/node_modules/@crewline/events/ and /b/node_modules/@crewline/events/');
  });
});
