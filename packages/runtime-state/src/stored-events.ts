import type { EventRecord } from '@crewline/events';
import { z } from 'zod';
import { formatIssues, stateError } from './errors.js';
import { findStoredValueProblem, throwStoredValueProblem } from './nesting-depth.js';

const eventRecordSchema = z.looseObject({
  type: z.string().min(1).max(200),
  eventId: z.string().min(1).max(200),
  sequence: z.number().int().nonnegative(),
  timestamp: z.string(),
});

const eventListSchema = z.strictObject({ events: z.array(eventRecordSchema) });

function isBoundedString(value: unknown): boolean {
  return typeof value === 'string' && value.length >= 1 && value.length <= 200;
}

/**
 * What `eventRecordSchema` accepts, checked in place: a restore reads hundreds of events, and the
 * schema would copy every one of them.
 */
function eventsFitRecords(events: readonly unknown[]): boolean {
  for (const event of events) {
    if (event === null || typeof event !== 'object' || Array.isArray(event)) return false;
    const record = event as Record<string, unknown>;
    if (!isBoundedString(record.type) || !isBoundedString(record.eventId)) return false;
    const sequence = record.sequence;
    if (typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 0) return false;
    if (typeof record.timestamp !== 'string') return false;
  }
  return true;
}

/**
 * Throws the `corrupt_checkpoint` error of a checkpoint whose `events` are not event records (a type,
 * an id, a sequence number and a time each); the schema runs only then, to say what is wrong.
 */
export function checkEventRecords(events: readonly unknown[], origin = ''): void {
  if (eventsFitRecords(events)) return;
  const parsed = eventListSchema.safeParse({ events });
  throw stateError(
    'corrupt_checkpoint',
    `checkpoint${origin} is invalid: ${parsed.success ? 'events: not event records' : formatIssues(parsed.error.issues)}`,
  );
}

function damagedEvents(origin: string, what: string, cause?: unknown): never {
  throw stateError(
    'corrupt_checkpoint',
    `checkpoint${origin} is invalid: events: ${what}; delete it, or resume from another checkpoint`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * The events of a checkpoint from its stored event lines (one JSON object each, as the checkpoint's
 * text holds them), checked as the events of a parsed document are: nesting depth and `__proto__`
 * keys counted from the document (the events are its level 2), then the fields of each record.
 * `origin` is `""` or ` (where it came from)`.
 */
export function parseStoredEvents(lines: readonly string[], origin: string): EventRecord[] {
  let events: unknown;
  try {
    // One parse of the lines as the text holds them (joined in a list), not one per line.
    events = lines.length === 0 ? [] : JSON.parse(`[${lines.join(',')}]`);
  } catch (error) {
    damagedEvents(origin, 'an event line is not valid JSON', error);
  }
  // A line like `1,2` parses, as two values: the count says the lines were not one event each.
  if (!Array.isArray(events) || events.length !== lines.length) {
    damagedEvents(origin, 'the event lines do not hold one event each');
  }
  // Walked from a holder in the events' place in the document, so depths and paths read as there.
  const holder = { events };
  throwStoredValueProblem(holder, findStoredValueProblem(holder, { jsonValues: false }), origin);
  checkEventRecords(events, origin);
  return events as EventRecord[];
}

/**
 * Gives `document` (checked but for its events) the events of `lines`, parsed and checked by
 * {@link parseStoredEvents} the first time something reads them: restoring a crew, a flow or an agent
 * reads none of the hundreds of events a long run holds until the run continues, and parsing them
 * was most of a restore's work. A damaged line is the same typed `corrupt_checkpoint` error, thrown
 * where the events are read; what is assigned to `events` is kept as given.
 */
export function withStoredEvents<T extends object>(
  document: T,
  lines: readonly string[],
  origin: string,
): T & { events: EventRecord[] } {
  let events: EventRecord[] | undefined;
  let pending: readonly string[] | undefined = lines;
  Object.defineProperty(document, 'events', {
    configurable: true,
    enumerable: true,
    get(): EventRecord[] {
      if (events === undefined) {
        events = parseStoredEvents(pending as readonly string[], origin);
        // The text is not needed once parsed: a long run's events are a megabyte of it.
        pending = undefined;
      }
      return events;
    },
    set(value: EventRecord[]) {
      events = value;
      pending = undefined;
    },
  });
  return document as T & { events: EventRecord[] };
}
