import type pg from 'pg';
import type { QueueLocation } from './connection.js';
import { workerError } from './errors.js';

/** Schemas named in the message before `...`. */
const namedSchemas = 5;

/** Why a client that does not create the queue needs it: said in the refusal's advice. */
export type QueueUse = 'read' | 'enqueue';

/**
 * Resolves when the queue's runs table exists; else rejects with a typed `not_found` naming the
 * schema, the schemas of this database that hold a run queue, and how to create it. Only a worker
 * (or a client told to create it) creates a queue: a reader that created one would turn a misspelt
 * `?schema=` into an empty queue, and a run enqueued there would wait for a worker that never reads it.
 */
export async function checkQueueExists(pool: pg.Pool, location: QueueLocation, use: QueueUse): Promise<void> {
  const { rows } = await pool.query<{ exists: boolean; holding: string[] | null }>(
    `SELECT to_regclass(format('%I.worker_runs', $1::text)) IS NOT NULL AS exists,
            (SELECT array_agg(table_schema::text ORDER BY table_schema) FROM information_schema.tables
              WHERE table_name = 'worker_runs') AS holding`,
    [location.schema],
  );
  const row = rows[0]!;
  if (row.exists) return;
  const holding = row.holding ?? [];
  const known =
    holding.length === 0
      ? 'no schema of this database holds a run queue yet'
      : `schemas holding run queues here: ${holding
          .slice(0, namedSchemas)
          .map((name) => `"${name}"`)
          .join(', ')}${holding.length > namedSchemas ? ', ...' : ''}`;
  const create =
    use === 'enqueue'
      ? `, or create it as you enqueue (crewline runs enqueue --create; RunQueue option create: true)`
      : '';
  throw workerError(
    'not_found',
    `the run queue ${location.display} does not exist: schema "${location.schema}" has no runs table; check the schema name (?schema= in the URL; ${known}), or start a worker on this location first (crewline worker --location …), which creates it${create}`,
    { details: { schema: location.schema } },
  );
}
