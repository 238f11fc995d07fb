import { setTimeout as sleep } from 'node:timers/promises';
import { CrewlineError } from '@crewline/events';
import { growingRun, nextWrites } from '@crewline/provider-testkit/fixtures';
import type pg from 'pg';
import { expect, it } from 'vitest';
import { parseLocation } from './location.js';
import { PostgresProvider } from './postgres-provider.js';
import { describeWithPostgres, useTemporaryLocations, withServer } from './test-support/test-server.js';

const temporary = useTemporaryLocations();

/**
 * Runs `operation` while another session holds the checkpoints table, so it waits on a lock with its
 * client checked out; then ends that waiting backend as a restart or failover would (FATAL 57P01,
 * then the socket closes), and so the one of its one more attempt on a fresh connection, and returns
 * how the operation ended.
 */
async function endedWhileWaiting(location: string, operation: () => Promise<unknown>): Promise<unknown> {
  const schema = parseLocation(location, 'crewline').schema;
  // An 'error' event of a client nobody listens for is thrown where it is emitted: uncaught.
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', record);
  try {
    const ended = await withServer(async (blocker) => {
      await blocker.query('BEGIN');
      await blocker.query(`LOCK TABLE "${schema}".checkpoints IN ACCESS EXCLUSIVE MODE`);
      let settled = false;
      const outcome = operation().then(
        () => 'succeeded',
        (error: unknown) => error,
      );
      void outcome.finally(() => {
        settled = true;
      });
      expect(await terminateWhileWaiting(blocker, () => settled)).toBe(2);
      const result = await outcome;
      await blocker.query('ROLLBACK');
      return result;
    });
    // The socket's end is handled after the failure is returned: give it a moment to come.
    await sleep(100);
    expect(uncaught).toEqual([]);
    return ended;
  } finally {
    process.off('uncaughtException', record);
  }
}

/**
 * Terminates each backend that waits on a lock the blocker holds, until the operation has `settled`;
 * returns how many it terminated.
 */
async function terminateWhileWaiting(blocker: pg.Client, settled: () => boolean): Promise<number> {
  let terminated = 0;
  // pg_stat_activity is read once per transaction, and the blocker's stays open: read it afresh.
  for (let attempt = 0; attempt < 1000 && !settled(); attempt += 1) {
    await blocker.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await blocker.query<{ terminated: boolean }>(
      `SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
        WHERE pid <> pg_backend_pid() AND wait_event_type = 'Lock' AND pg_backend_pid() = ANY(pg_blocking_pids(pid))`,
    );
    terminated += rows.filter((row) => row.terminated).length;
    await sleep(10);
  }
  if (!settled()) throw new Error('the operation did not end');
  return terminated;
}

function expectConnectionLost(failure: unknown): void {
  expect(CrewlineError.hasCode(failure, 'write_failed')).toBe(true);
  expect((failure as CrewlineError).details).toMatchObject({ unreachable: true, connectionLost: true });
  expect((failure as Error).message).toMatch(/connection to the Postgres server of .* was lost/);
}

describeWithPostgres('a connection that dies under a write and under its one more attempt', () => {
  // Before: the client's 'error' event ("Connection terminated unexpectedly"), emitted while the
  // group's ROLLBACK waited on it, had no listener and ended the process (vitest reports it as an
  // unhandled error), and the failure was an untyped "write ... failed".
  it('fails a group write with a typed, retryable error, without an uncaught error, and the next write takes a fresh connection', async () => {
    const provider = temporary.track(new PostgresProvider({ poolSize: 2 }));
    const location = provider.resolveLocation(temporary.location());
    const run = growingRun({ tasks: 6, outputBytes: 200 });
    const [root] = nextWrites(run, 1);
    await provider.writeBatch(location, [root!]);
    // More than one statement's worth: the group runs inside BEGIN ... COMMIT.
    const group = nextWrites(run, 70, root);

    const failure = await endedWhileWaiting(location, () => provider.writeBatch(location, group));

    expectConnectionLost(failure);
    const stored = await provider.writeBatch(location, group);
    expect(stored.map((checkpoint) => checkpoint.id)).toEqual(group.map((write) => write.metadata.id));
  });

  // Before: the FATAL error has a severity, so the dead client was given back to the pool as usable,
  // and the write failed with an untyped "write ... failed: terminating connection due to
  // administrator command".
  it('fails a single write with the same typed error, and the next write goes through', async () => {
    const provider = temporary.track(new PostgresProvider({ poolSize: 1 }));
    const location = provider.resolveLocation(temporary.location());
    const run = growingRun({ tasks: 3, outputBytes: 200 });
    const [root, next] = nextWrites(run, 2);
    await provider.write(location, root!);

    const failure = await endedWhileWaiting(location, () => provider.write(location, next!));

    expectConnectionLost(failure);
    // One connection in the pool: the next write opens a fresh one.
    expect((await provider.write(location, next!)).id).toBe(next!.metadata.id);
    expect((await provider.list(location)).map((checkpoint) => checkpoint.id)).toEqual([
      root!.metadata.id,
      next!.metadata.id,
    ]);
  });
});
