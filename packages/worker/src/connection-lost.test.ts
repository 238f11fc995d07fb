import { setTimeout as sleep } from 'node:timers/promises';
import { describeWithPostgres, temporaryLocation, withServer } from '@crewline/test-support/postgres';
import type pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { inTransaction, openPool, parseQueueLocation } from './connection.js';
import { migrateRunsTable } from './schema.js';

const pools: pg.Pool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.end();
});

/** A pool on the test server, recording the error each client was released with (none: undefined). */
function recordingPool(): { pool: pg.Pool; schema: string; released: (Error | undefined)[] } {
  const location = parseQueueLocation(temporaryLocation());
  const pool = openPool(location, 1, 'crewline-test-connection-lost');
  pools.push(pool);
  const released: (Error | undefined)[] = [];
  pool.on('release', (error: Error | undefined) => released.push(error));
  return { pool, schema: location.schema, released };
}

/**
 * Runs `operation` while `block` (on another session, in a transaction) makes it wait with its client
 * checked out; then ends the waiting backend as a restart or failover would (FATAL 57P01, then the
 * socket closes). Returns how the operation ended and what was thrown uncaught meanwhile.
 */
async function endedWhileWaiting(
  block: (blocker: pg.Client) => Promise<unknown>,
  operation: () => Promise<unknown>,
): Promise<{ outcome: unknown; uncaught: unknown[] }> {
  // An 'error' event of a client nobody listens for is thrown where it is emitted: uncaught.
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', record);
  try {
    const outcome = await withServer(async (blocker) => {
      await blocker.query('BEGIN');
      await block(blocker);
      const ended = operation().then(
        () => 'succeeded',
        (error: unknown) => error,
      );
      await terminateWaiting(blocker);
      const result = await ended;
      await blocker.query('ROLLBACK');
      return result;
    });
    // The socket's end is handled after the failure is returned: give it a moment to come.
    await sleep(100);
    return { outcome, uncaught };
  } finally {
    process.off('uncaughtException', record);
  }
}

/** Terminates the backend that waits on a lock the blocker holds (polls until one does). */
async function terminateWaiting(blocker: pg.Client): Promise<void> {
  // pg_stat_activity is read once per transaction, and the blocker's stays open: read it afresh.
  for (let attempt = 0; attempt < 500; attempt += 1) {
    await blocker.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await blocker.query<{ terminated: boolean }>(
      `SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
        WHERE pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND pg_backend_pid() = ANY(pg_blocking_pids(pid))`,
    );
    if (rows.some((row) => row.terminated)) return;
    await sleep(10);
  }
  throw new Error('no backend waited on the lock');
}

describeWithPostgres('a queue connection that dies while it is checked out', () => {
  // Before: the client went back to the pool as usable, and with its ROLLBACK queued on the dead
  // connection, its 'error' event ("Connection terminated unexpectedly") had no listener: uncaught.
  it('inTransaction fails with the error that says so, drops the client, and the next transaction goes through', async () => {
    const { pool, schema, released } = recordingPool();
    await migrateRunsTable(pool, schema);
    released.length = 0;

    const { outcome, uncaught } = await endedWhileWaiting(
      (blocker) => blocker.query(`LOCK TABLE "${schema}".worker_runs IN ACCESS EXCLUSIVE MODE`),
      () => inTransaction(pool, (client) => client.query(`SELECT count(*) FROM "${schema}".worker_runs`)),
    );

    expect(uncaught).toEqual([]);
    expect(outcome).toBeInstanceOf(Error);
    expect(released).toHaveLength(1);
    expect(released[0]).toBeInstanceOf(Error);
    const { rows } = await inTransaction(pool, (client) =>
      client.query<{ count: string }>(`SELECT count(*) FROM "${schema}".worker_runs`),
    );
    expect(rows[0]!.count).toBe('0');
  });

  it('migrateRunsTable fails the same way when its connection dies, and the next start migrates', async () => {
    const { pool, schema, released } = recordingPool();

    const { outcome, uncaught } = await endedWhileWaiting(
      // The lock concurrent first workers take: the migration waits for it.
      (blocker) =>
        blocker.query(`SELECT pg_advisory_xact_lock(hashtext('crewline-worker:' || $1))`, [schema]),
      () => migrateRunsTable(pool, schema),
    );

    expect(uncaught).toEqual([]);
    expect(outcome).toBeInstanceOf(Error);
    expect(released).toHaveLength(1);
    expect(released[0]).toBeInstanceOf(Error);
    await migrateRunsTable(pool, schema);
    await withServer((client) => client.query(`DROP SCHEMA "${schema}" CASCADE`));
  });
});
