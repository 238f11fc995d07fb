import type pg from 'pg';
import type { GarbageReport } from './reports.js';
import { lockKey } from './schema.js';
import type { SchemaHandle } from './schema-handle.js';

/**
 * Removes the events and chunks no remaining checkpoint needs, in one transaction holding the
 * schema's advisory lock exclusively (writes hold it shared: a write never refers to a chunk or event
 * that is being removed). A stream keeps its events up to the largest event count of its checkpoints
 * and up to the fork point of every stream that continues it; a stream with neither goes whole.
 * Chunks are marked from every remaining head through `refs`, and the others deleted.
 */
export async function collectGarbage(client: pg.PoolClient, handle: SchemaHandle): Promise<GarbageReport> {
  const s = handle.quoted;
  await client.query('BEGIN');
  try {
    await client.query(`SELECT pg_advisory_xact_lock(${lockKey(handle.schema)})`);
    const needed = new Map<number, number>();
    const counts = await client.query<[string, number]>({
      text: `SELECT stream_id, max(event_count) FROM ${s}.checkpoints GROUP BY stream_id`,
      rowMode: 'array',
    });
    for (const [stream, count] of counts.rows) needed.set(Number(stream), count);
    const streams = await client.query<[string, string | null, number, number]>({
      text: `SELECT id, parent_id, base, length FROM ${s}.streams ORDER BY id DESC`,
      rowMode: 'array',
    });
    // A stream is always created after its parent, so children come first in this order.
    for (const [id, parent, base] of streams.rows) {
      if (needed.has(Number(id)) && parent !== null) {
        const parentId = Number(parent);
        needed.set(parentId, Math.max(needed.get(parentId) ?? 0, base));
      }
    }
    const removedStreams: number[] = [];
    const trimmed: number[] = [];
    const keepLengths: number[] = [];
    for (const [rawId, , base, length] of streams.rows) {
      const id = Number(rawId);
      const keep = needed.get(id);
      if (keep === undefined) removedStreams.push(id);
      else if (Math.max(keep, base) < length) {
        trimmed.push(id);
        keepLengths.push(Math.max(keep, base));
      }
    }
    const report: GarbageReport = { streams: 0, events: 0, chunks: 0 };
    if (removedStreams.length > 0) {
      report.events += (
        await client.query(`DELETE FROM ${s}.events WHERE stream_id = ANY($1::bigint[])`, [removedStreams])
      ).rowCount!;
      report.streams = (
        await client.query(`DELETE FROM ${s}.streams WHERE id = ANY($1::bigint[])`, [removedStreams])
      ).rowCount!;
    }
    if (trimmed.length > 0) {
      report.events += (
        await client.query(
          `DELETE FROM ${s}.events e USING unnest($1::bigint[], $2::integer[]) AS k(stream_id, keep)
            WHERE e.stream_id = k.stream_id AND e.seq >= k.keep`,
          [trimmed, keepLengths],
        )
      ).rowCount!;
      // A trimmed stream ends at its newest remaining checkpoint again, so that it can be continued.
      await client.query(
        `UPDATE ${s}.streams st SET length = k.keep,
            bytes = CASE WHEN k.keep > st.base
              THEN (SELECT e.end_bytes FROM ${s}.events e WHERE e.stream_id = st.id AND e.seq = k.keep - 1)
              ELSE st.base_bytes END
          FROM unnest($1::bigint[], $2::integer[]) AS k(stream_id, keep) WHERE st.id = k.stream_id`,
        [trimmed, keepLengths],
      );
    }
    report.chunks = (
      await client.query(
        `WITH RECURSIVE live(id) AS (
            SELECT head FROM ${s}.checkpoints
            UNION SELECT c.id - r.offset_by FROM live l JOIN ${s}.chunks c ON c.id = l.id
              CROSS JOIN LATERAL unnest(string_to_array(c.refs, ',')::bigint[]) AS r(offset_by))
          DELETE FROM ${s}.chunks c WHERE NOT EXISTS (SELECT 1 FROM live WHERE live.id = c.id)`,
      )
    ).rowCount!;
    await client.query(`UPDATE ${s}.crewline_meta SET value = '0' WHERE key = 'pending_garbage'`);
    await client.query('COMMIT');
    return report;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * The checkpoints that remain, for the threshold of {@link recordRemoved}: the planner's estimate past
 * 10,000 rows (a count would read them all), else a count.
 */
function liveCheckpoints(s: string): string {
  return `(SELECT CASE WHEN c.reltuples >= 10000 THEN c.reltuples::bigint
          ELSE (SELECT count(*) FROM ${s}.checkpoints) END
           FROM pg_class c WHERE c.oid = '${s}.checkpoints'::regclass)`;
}

/** Whether `pending` removed checkpoints are enough garbage to collect, with `live` remaining. */
function collectionDue(row: { pending: string | null; live: string | null } | undefined): boolean {
  if (row === undefined || row.pending === null) return false;
  return Number(row.pending) >= Math.max(1, Math.ceil(Number(row.live) / 4));
}

/**
 * Counts removed checkpoints and tells whether a collection is due: once the removals add up to a
 * quarter of the remaining checkpoints (at least one), so that its cost, which grows with the schema,
 * is spread over many removals while the garbage stays a bounded fraction of what is live.
 */
export async function recordRemoved(
  client: pg.PoolClient,
  handle: SchemaHandle,
  removed: number,
): Promise<boolean> {
  if (removed === 0) return false;
  const s = handle.quoted;
  const { rows } = await client.query<{ pending: string | null; live: string | null }>(
    `WITH pending AS (
        UPDATE ${s}.crewline_meta SET value = (value::bigint + $1)::text WHERE key = 'pending_garbage' RETURNING value)
      SELECT (SELECT value FROM pending) AS pending, ${liveCheckpoints(s)} AS live`,
    [removed],
  );
  return collectionDue(rows[0]);
}

/**
 * Whether the removals counted so far make a collection due ({@link recordRemoved}), counting none:
 * a removal killed after its commit, before its collection, left them counted and not collected.
 */
export async function garbageDue(client: pg.PoolClient, handle: SchemaHandle): Promise<boolean> {
  const s = handle.quoted;
  // The checkpoints are counted only when something is (the usual no-op prune counts nothing).
  const { rows } = await client.query<{ pending: string | null; live: string | null }>(
    `WITH pending AS (SELECT value FROM ${s}.crewline_meta WHERE key = 'pending_garbage')
      SELECT (SELECT value FROM pending) AS pending,
        CASE WHEN (SELECT value::bigint FROM pending) > 0 THEN ${liveCheckpoints(s)} END AS live`,
  );
  const row = rows[0];
  return row !== undefined && Number(row.pending ?? 0) > 0 && collectionDue(row);
}
