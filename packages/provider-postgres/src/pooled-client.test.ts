import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { withPooledClient } from './pooled-client.js';
import { QueryTimedOut } from './query-timeout.js';
import { SocketClosingClient } from './socket-closing-client.js';
import { describeWithPostgres, testServerUrl } from './test-support/test-server.js';

const pools: pg.Pool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.end();
});

function onePool(config: pg.PoolConfig = {}): { pool: pg.Pool; removed: () => number } {
  const pool = new pg.Pool({ connectionString: testServerUrl(), max: 1, ...config });
  pools.push(pool);
  let removed = 0;
  pool.on('remove', () => {
    removed += 1;
  });
  return { pool, removed: () => removed };
}

async function backendOf(pool: pg.Pool): Promise<number> {
  return withPooledClient(
    pool,
    async (client) => (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid,
  );
}

describeWithPostgres('withPooledClient', () => {
  // Before: an error without a severity that was not a CrewlineError dropped the client, so a
  // transaction rolled back by a plain Error (the worker's AttemptEnds.requeue) replaced the backend.
  it('gives a client back for the next caller when work throws a plain Error', async () => {
    const { pool, removed } = onePool();
    const before = await backendOf(pool);
    class RollBack extends Error {}
    await expect(
      withPooledClient(pool, async (client) => {
        await client.query('SELECT 1');
        throw new RollBack('rolled back on purpose');
      }),
    ).rejects.toBeInstanceOf(RollBack);
    expect(await backendOf(pool)).toBe(before);
    expect(removed()).toBe(0);
  });

  it('drops the client when its connection was lost', async () => {
    const { pool, removed } = onePool();
    const before = await backendOf(pool);
    await expect(
      withPooledClient(pool, (client) => client.query('SELECT pg_terminate_backend(pg_backend_pid())')),
    ).rejects.toBeDefined();
    expect(await backendOf(pool)).not.toBe(before);
    expect(removed()).toBe(1);
  });

  it('closes a client whose query got no answer in time: what follows fails at once, the timeout is what is thrown, the client is not lent again', async () => {
    const { pool, removed } = onePool({ Client: SocketClosingClient, query_timeout: 500 });
    const before = await backendOf(pool);
    let rollbackMs = Number.NaN;
    const error = await withPooledClient(pool, async (client) => {
      await client.query('BEGIN');
      try {
        await client.query('SELECT pg_sleep(5)');
      } finally {
        const startedAt = performance.now();
        await client.query('ROLLBACK').catch(() => undefined);
        rollbackMs = performance.now() - startedAt;
      }
    }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(QueryTimedOut);
    expect((error as QueryTimedOut).timeoutMs).toBe(500);
    expect((error as QueryTimedOut).ownLimit).toBe(false);
    // Not queued behind the query that never answered (which would take another 500 ms).
    expect(rollbackMs).toBeLessThan(250);
    expect(await backendOf(pool)).not.toBe(before);
    expect(removed()).toBe(1);
  });

  it("takes a query's own time limit when it is tighter than the pool's, and the pool's when it is looser", async () => {
    const { pool } = onePool({ Client: SocketClosingClient, query_timeout: 1_000 });
    const sleepWithin = async (query_timeout: number) => {
      const startedAt = performance.now();
      const error = await withPooledClient(pool, (client) =>
        client.query({ text: 'SELECT pg_sleep(5)', query_timeout } as pg.QueryConfig),
      ).catch((thrown: unknown) => thrown);
      return { error: error as QueryTimedOut, elapsedMs: performance.now() - startedAt };
    };
    const tighter = await sleepWithin(300);
    expect(tighter.error).toBeInstanceOf(QueryTimedOut);
    expect(tighter.error.timeoutMs).toBe(300);
    expect(tighter.error.ownLimit).toBe(true);
    expect(tighter.elapsedMs).toBeLessThan(900);
    const looser = await sleepWithin(60_000);
    expect(looser.error).toBeInstanceOf(QueryTimedOut);
    expect(looser.error.timeoutMs).toBe(1_000);
    expect(looser.error.ownLimit).toBe(false);
    expect(looser.elapsedMs).toBeLessThan(4_000);
  });
});
