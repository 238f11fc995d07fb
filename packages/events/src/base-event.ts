import { randomUUID } from 'node:crypto';
import type { EventType } from './event-types.js';

/** Which entity emitted an event. Kept small: the entity itself lives in the run's state. */
export interface EventSource {
  kind:
    | 'crew'
    | 'flow'
    | 'agent'
    | 'task'
    | 'llm'
    | 'tool'
    | 'memory'
    | 'knowledge'
    | 'system'
    | 'checkpoint';
  id: string;
  name?: string;
}

/** Where in a run an event happened. Filled by the emitter; used to route triggers and to rebuild. */
export interface EventContext {
  crewId?: string;
  flowId?: string;
  methodName?: string;
  taskId?: string;
  taskIndex?: number;
  taskName?: string;
  agentId?: string;
  agentRole?: string;
}

export interface EventInit {
  eventId?: string;
  timestamp?: string;
  source?: EventSource;
  context?: EventContext;
  parentEventId?: string;
}

/** The plain JSON form of an event, as stored in a checkpoint's event history. */
export interface EventRecord {
  type: string;
  eventId: string;
  sequence: number;
  timestamp: string;
  source?: EventSource;
  context?: EventContext;
  parentEventId?: string;
  [field: string]: unknown;
}

const baseFields = new Set([
  'type',
  'eventId',
  'sequence',
  'timestamp',
  'source',
  'context',
  'parentEventId',
]);

/** Base of every event. Subclasses are made with {@link defineEvent}. */
export abstract class BaseEvent {
  static readonly type: string;
  abstract readonly type: EventType;
  eventId: string;
  /** Position in the run's event history, assigned by the bus when the event is emitted in a run. */
  sequence = 0;
  timestamp: string;
  source: EventSource | undefined;
  context: EventContext;
  parentEventId: string | undefined;

  constructor(init: EventInit = {}) {
    this.eventId = init.eventId ?? randomUUID();
    this.timestamp = init.timestamp ?? new Date().toISOString();
    this.source = init.source;
    this.context = init.context ?? {};
    this.parentEventId = init.parentEventId;
  }

  /** The payload fields of this event (everything but the common header). */
  payload(): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    for (const key of Object.keys(this)) {
      if (!baseFields.has(key)) result[key] = (this as Record<string, unknown>)[key];
    }
    return result;
  }

  toJSON(): EventRecord {
    const record: EventRecord = {
      type: this.type,
      eventId: this.eventId,
      sequence: this.sequence,
      timestamp: this.timestamp,
    };
    if (this.source) record.source = this.source;
    if (Object.keys(this.context).length > 0) record.context = this.context;
    if (this.parentEventId) record.parentEventId = this.parentEventId;
    return Object.assign(record, this.payload());
  }
}

/** A class of events: has a static `type` and builds instances of `E`. */
export interface EventClass<E extends BaseEvent = BaseEvent> {
  readonly type: string;
  new (...args: any[]): E;
}

/**
 * Makes an event class for one catalog type with a typed payload:
 * `class TaskCompletedEvent extends defineEvent<'task_completed', { output: string }>('task_completed') {}`.
 */
export function defineEvent<
  TType extends EventType,
  TPayload extends object = { data?: Record<string, unknown> },
>(type: TType) {
  class DefinedEvent extends BaseEvent {
    static override readonly type: TType = type;
    override readonly type: TType = type;
    constructor(init: TPayload & EventInit) {
      super(init);
      for (const [key, value] of Object.entries(init)) {
        if (!baseFields.has(key) && value !== undefined) (this as Record<string, unknown>)[key] = value;
      }
    }
  }
  return DefinedEvent as unknown as {
    readonly type: TType;
    new (init: TPayload & EventInit): DefinedEvent & Readonly<TPayload>;
  };
}
