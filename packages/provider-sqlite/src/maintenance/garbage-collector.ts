import { chunkReferences, referencedChunks } from '@crewline/runtime-state/internal';
import type { Connection } from '../database/connection.js';
import { eventKey } from '../database/schema.js';
import { component } from '../errors.js';

/** What one garbage collection removed. */
export interface GarbageReport {
  streams: number;
  events: number;
  chunks: number;
}

/**
 * Removes the events and chunks no remaining checkpoint needs. A stream must keep its events up to
 * the largest event count of its checkpoints and up to the fork point of every stream that
 * continues it; a stream with neither is removed whole. Runs in one `BEGIN IMMEDIATE` transaction.
 */
export function collectGarbage(connection: Connection): GarbageReport {
  const { db } = connection;
  connection.lastWrite = undefined;
  return db
    .transaction((): GarbageReport => {
      const needed = new Map<number, number>();
      for (const row of db
        .prepare('SELECT stream_id, max(event_count) AS count FROM checkpoints GROUP BY stream_id')
        .all() as { stream_id: number; count: number }[]) {
        needed.set(row.stream_id, row.count);
      }
      const streams = db.prepare('SELECT id, parent_id, base FROM streams ORDER BY id DESC').all() as {
        id: number;
        parent_id: number | null;
        base: number;
      }[];
      // A stream is always created after its parent, so children come first in this order.
      for (const stream of streams) {
        if (needed.has(stream.id) && stream.parent_id !== null) {
          needed.set(stream.parent_id, Math.max(needed.get(stream.parent_id) ?? 0, stream.base));
        }
      }
      const deleteEvents = db.prepare('DELETE FROM events WHERE key >= ? AND key < ?');
      const deleteStream = db.prepare('DELETE FROM streams WHERE id = ?');
      const report: GarbageReport = { streams: 0, events: 0, chunks: 0 };
      for (const stream of streams) {
        const keep = needed.get(stream.id);
        const from = keep === undefined ? 0 : Math.max(keep, stream.base);
        report.events += deleteEvents.run(eventKey(stream.id, from), eventKey(stream.id + 1, 0)).changes;
        if (keep === undefined) report.streams += deleteStream.run(stream.id).changes;
      }
      // Chunks go: what recent writes stored may be among them.
      connection.forgetValues();
      report.chunks = sweepChunks(connection);
      connection.statements.writeMeta.run('pending_garbage', '0');
      return report;
    })
    .immediate();
}

/**
 * Marks every chunk reachable from a remaining checkpoint's head, then deletes the others. A
 * damaged head or chunk marks nothing below it (its checkpoint is unreadable anyway) instead of
 * failing the collection.
 */
function sweepChunks(connection: Connection): number {
  const { db, statements } = connection;
  const live = new Set<number>();
  const pending: number[] = [];
  const mark = (body: string) => {
    try {
      for (const id of referencedChunks(component, body)) {
        if (!live.has(id)) {
          live.add(id);
          pending.push(id);
        }
      }
    } catch {
      // damaged: nothing below it is marked
    }
  };
  for (const head of db.prepare('SELECT head FROM checkpoints').pluck().iterate() as Iterable<string>) {
    // A head is the id of its root chunk, or (rows of schema versions 1 and 2) the root body itself.
    if (head.charAt(0) === '{') mark(head);
    else {
      const id = Number(head);
      if (Number.isSafeInteger(id) && !live.has(id)) {
        live.add(id);
        pending.push(id);
      }
    }
  }
  // Entity summaries kept in a chunk: the `entities` column names it.
  for (const entities of db
    .prepare("SELECT entities FROM checkpoints WHERE substr(entities, 1, 1) <> '['")
    .pluck()
    .iterate() as Iterable<string>) {
    const id = Number(entities);
    if (Number.isSafeInteger(id)) live.add(id);
  }
  while (pending.length > 0) {
    const id = pending.pop()!;
    const body = statements.chunkBody.get(id);
    if (typeof body !== 'string') continue;
    try {
      for (const found of chunkReferences(component, body, id)) {
        if (!live.has(found)) {
          live.add(found);
          pending.push(found);
        }
      }
    } catch {
      // damaged: nothing below it is marked
    }
  }
  const doomed: number[] = [];
  for (const id of db.prepare('SELECT id FROM chunks').pluck().iterate() as Iterable<number>) {
    if (!live.has(id)) doomed.push(id);
  }
  const remove = db.prepare('DELETE FROM chunks WHERE id = ?');
  for (const id of doomed) remove.run(id);
  return doomed.length;
}

/**
 * Counts removed checkpoints (call it inside the transaction that removed them) and tells whether a
 * collection is due: once the removals add up to a quarter of the remaining checkpoints (at least
 * one). A collection costs time in proportion to the database, so it is spread over many removals
 * while the garbage stays bounded by a fraction of what is live.
 */
export function recordRemoved(connection: Connection, removed: number): boolean {
  if (removed === 0) return false;
  const { statements } = connection;
  const pending = Number(statements.readMeta.get('pending_garbage') ?? 0) + removed;
  statements.writeMeta.run('pending_garbage', String(pending));
  return collectionDue(connection, pending);
}

/**
 * Whether the removals counted so far make a collection due ({@link recordRemoved}), counting none:
 * a removal killed after its commit, before its collection, left them counted and not collected.
 */
export function garbageDue(connection: Connection): boolean {
  const pending = Number(connection.statements.readMeta.get('pending_garbage') ?? 0);
  // Nothing counted (the usual case, asked after every no-op prune): the checkpoints go uncounted.
  return pending > 0 && collectionDue(connection, pending);
}

function collectionDue(connection: Connection, pending: number): boolean {
  const live = connection.statements.countCheckpoints.get() as number;
  return pending >= Math.max(1, Math.ceil(live / 4));
}
