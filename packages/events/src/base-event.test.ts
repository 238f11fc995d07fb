import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskCompletedEvent } from './event-classes/crew-events.js';

afterEach(() => vi.useRealTimers());

describe('defineEvent classes', () => {
  it('copy the payload fields given, skip undefined ones and keep the header apart', () => {
    const event = new TaskCompletedEvent({
      description: 'Research',
      output: 'bullets',
      agentRole: undefined,
      eventId: 'event-1',
      timestamp: '2026-01-02T03:04:05.678Z',
      context: { crewId: 'crew-1' },
      parentEventId: 'event-0',
    } as ConstructorParameters<typeof TaskCompletedEvent>[0]);
    expect(Object.keys(event)).toEqual([
      'eventId',
      'sequence',
      'timestamp',
      'source',
      'context',
      'parentEventId',
      'type',
      'description',
      'output',
    ]);
    expect(event.toJSON()).toEqual({
      type: 'task_completed',
      eventId: 'event-1',
      sequence: 0,
      timestamp: '2026-01-02T03:04:05.678Z',
      context: { crewId: 'crew-1' },
      parentEventId: 'event-0',
      description: 'Research',
      output: 'bullets',
    });
  });

  it('stamp each event with the ISO time of the millisecond it was made in and a new UUID', () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 27, 12, 0, 0, 1) });
    const first = new TaskCompletedEvent({ description: 'a', output: 'a' });
    const sameMillisecond = new TaskCompletedEvent({ description: 'b', output: 'b' });
    vi.setSystemTime(Date.UTC(2026, 10, 27, 12, 0, 0, 2));
    const next = new TaskCompletedEvent({ description: 'c', output: 'c' });
    expect(first.timestamp).toBe('2026-11-27T12:00:00.001Z');
    expect(sameMillisecond.timestamp).toBe('2026-11-27T12:00:00.001Z');
    expect(next.timestamp).toBe('2026-11-27T12:00:00.002Z');
    expect(first.eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set([first.eventId, sameMillisecond.eventId, next.eventId]).size).toBe(3);
  });
});
