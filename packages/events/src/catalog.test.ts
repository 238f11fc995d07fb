import { describe, expect, expectTypeOf, it } from 'vitest';
import { eventClassesByType } from './catalog.js';
import { TaskCompletedEvent } from './event-classes/crew-events.js';
import { LLMCallCompletedEvent } from './event-classes/llm-events.js';
import { SigIntEvent } from './event-classes/signal-events.js';
import {
  allEventTypes,
  type CheckpointEventType,
  isTriggerEventType,
  triggerEventTypes,
} from './event-types.js';

describe('event catalog', () => {
  it('has one class per type, with matching static and instance type strings', () => {
    expect(Object.keys(eventClassesByType).sort()).toEqual([...allEventTypes].sort());
    for (const [type, EventClass] of Object.entries(eventClassesByType)) {
      expect(EventClass.type).toBe(type);
      expect(new (EventClass as new (init: object) => { type: string })({}).type).toBe(type);
    }
  });

  it('covers every category of the reference catalog, signals included', () => {
    for (const type of [
      'task_completed',
      'crew_kickoff_started',
      'flow_paused',
      'llm_call_completed',
      'tool_usage_finished',
      'memory_save_completed',
      'knowledge_query_completed',
      'a2a_context_pruned',
      'SIGINT',
      'SIGTERM',
      'SIGHUP',
      'SIGTSTP',
      'SIGCONT',
    ]) {
      expect(isTriggerEventType(type), type).toBe(true);
    }
    expect(isTriggerEventType('checkpoint_completed')).toBe(false);
    expect(triggerEventTypes.length).toBeGreaterThan(120);
  });

  it('serializes header and payload as plain JSON', () => {
    const event = new TaskCompletedEvent({
      description: 'Research',
      output: 'bullets',
      context: { taskId: 't1' },
    });
    const json = JSON.parse(JSON.stringify(event));
    expect(json).toMatchObject({
      type: 'task_completed',
      description: 'Research',
      output: 'bullets',
      context: { taskId: 't1' },
    });
    expect(typeof json.eventId).toBe('string');
    expect(new SigIntEvent({ signal: 'SIGINT' }).payload()).toEqual({ signal: 'SIGINT' });
  });

  it('types payloads and rejects unknown event types at compile time', () => {
    const event = new LLMCallCompletedEvent({ model: 'offline:x', callId: 'c', response: 'r' });
    expectTypeOf(event.response).toEqualTypeOf<string>();
    expectTypeOf<'task_completed'>().toExtend<CheckpointEventType>();
    expectTypeOf<'*'>().toExtend<CheckpointEventType>();
    // @ts-expect-error a typo is not an event type
    const typo: CheckpointEventType = 'task_complete';
    expect(typo).toBe('task_complete');
  });
});

describe('handler typing', () => {
  it('infers parameter types for two- and three-parameter handlers', async () => {
    const { EventBus } = await import('./event-bus.js');
    const bus = new EventBus();
    const offTwo = bus.on(TaskCompletedEvent, (source, event) => {
      expectTypeOf(source).toBeUnknown();
      expectTypeOf(event.output).toEqualTypeOf<string>();
    });
    const offThree = bus.on(LLMCallCompletedEvent, async (_source, event, state) => {
      expectTypeOf(event.response).toEqualTypeOf<string>();
      expectTypeOf(state.acheckpoint).toBeFunction();
    });
    offTwo();
    offThree();
  });
});
