import type { CheckpointWrite } from '@crewline/runtime-state';
import { damagedData, utf8Length } from '@crewline/runtime-state/internal';
import { eventKey, splitEventKey } from '../database/schema.js';
import type { Statements } from '../database/statements.js';
import { component } from '../errors.js';
import { type EventStrings, type Pending, resolveEventReferences } from './event-references.js';

/** Where a checkpoint's parent keeps its events. */
export interface ParentEvents {
  stream_id: number;
  event_count: number;
}

interface StreamRow {
  id: number;
  parent_id: number | null;
  base: number;
  base_bytes: number;
}

function streamById(statements: Statements, id: number): StreamRow {
  const row = statements.streamById.get(id) as StreamRow | undefined;
  if (row === undefined) throw damagedData(component, `event stream ${id} is missing`);
  return row;
}

/** Length (events, counting the inherited ones) and byte total of a stream as stored now. */
function streamTail(statements: Statements, id: number): { length: number; bytes: number } {
  const last = statements.lastEventOf.get(eventKey(id, 0), eventKey(id + 1, 0)) as
    | { key: bigint; end_bytes: bigint }
    | undefined;
  if (last !== undefined) return { length: splitEventKey(last.key).seq + 1, bytes: Number(last.end_bytes) };
  const stream = streamById(statements, id);
  return { length: stream.base, bytes: stream.base_bytes };
}

/** Bytes of the first `count` events of the lineage that ends in stream `id`. */
function bytesBefore(statements: Statements, id: number, count: number): number {
  let streamId: number | null = id;
  while (count > 0 && streamId !== null) {
    const stream = streamById(statements, streamId);
    if (count > stream.base) {
      const bytes = statements.eventEndBytes.get(eventKey(streamId, count - 1));
      if (typeof bytes !== 'number')
        throw damagedData(component, `event ${count - 1} of stream ${streamId} is missing`);
      return bytes;
    }
    if (count === stream.base) return stream.base_bytes;
    streamId = stream.parent_id;
  }
  if (count > 0) throw damagedData(component, 'an event stream has a base but no parent');
  return 0;
}

/**
 * Stores the events of a checkpoint that its parent does not already hold. When the parent is the
 * newest checkpoint of its stream, the new events are appended to that stream; otherwise (a fork, a
 * resume from an older checkpoint, an unknown parent) a new stream starts, continuing the parent's
 * after the events they share. Long strings that earlier events of the stream hold are stored as
 * references to them (see event-references.ts). Returns the stream, the byte total of all the
 * checkpoint's events, and the new long strings to remember once the write committed.
 */
export function placeEvents(
  statements: Statements,
  checkpoint: CheckpointWrite,
  parent: ParentEvents | undefined,
  strings: EventStrings,
  knownTail?: { length: number; bytes: number },
): { streamId: number; eventBytes: number; strings: Pending } {
  const count = checkpoint.document.events.length;
  let shared = parent === undefined ? 0 : Math.min(checkpoint.parentEventCount, parent.event_count, count);
  let streamId: number | undefined;
  let bytes = 0;
  if (parent !== undefined && shared === parent.event_count) {
    const tail = knownTail ?? streamTail(statements, parent.stream_id);
    if (tail.length === parent.event_count) {
      streamId = parent.stream_id;
      bytes = tail.bytes;
    }
  }
  if (streamId === undefined) {
    if (parent !== undefined && shared > 0) {
      bytes = bytesBefore(statements, parent.stream_id, shared);
      streamId = Number(statements.insertStream.run(parent.stream_id, shared, bytes).lastInsertRowid);
    } else {
      shared = 0;
      streamId = Number(statements.insertStream.run(null, 0, 0).lastInsertRowid);
    }
  }
  const pending = strings.begin(streamId);
  for (let index = shared; index < count; index += 1) {
    const text = checkpoint.eventText(index);
    bytes += utf8Length(text);
    statements.insertEvent.run(eventKey(streamId, index), strings.encode(text, index, pending), bytes);
  }
  return { streamId, eventBytes: bytes, strings: pending };
}

/**
 * The event lines of the first `count` events of the lineage that ends in stream `id`, in order;
 * lines that resolve to more than `maxCharacters` characters in all are damaged data.
 */
export function readEvents(
  statements: Statements,
  id: number,
  count: number,
  maxCharacters = Number.POSITIVE_INFINITY,
): string[] {
  const segments: string[][] = [];
  let streamId: number | null = id;
  let upTo = count;
  const visited = new Set<number>();
  while (upTo > 0) {
    if (streamId === null) throw damagedData(component, 'an event stream has a base but no parent');
    if (visited.has(streamId)) throw damagedData(component, 'event streams form a cycle');
    visited.add(streamId);
    const stream = streamById(statements, streamId);
    if (upTo > stream.base) {
      const lines = statements.eventsBetween.all(
        eventKey(streamId, stream.base),
        eventKey(streamId, upTo),
      ) as string[];
      if (lines.length !== upTo - stream.base) {
        throw damagedData(
          component,
          `stream ${streamId} holds ${lines.length} of its ${upTo - stream.base} events`,
        );
      }
      segments.push(lines);
      upTo = stream.base;
    }
    streamId = stream.parent_id;
  }
  return resolveEventReferences(segments.reverse().flat(), maxCharacters);
}
