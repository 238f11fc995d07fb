import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { withPooledClient } from './pooled-client.js';
import { QueryTimedOut } from './query-timeout.js';
import { type SilenceWatchConfig, SocketClosingClient } from './socket-closing-client.js';
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

  it("keeps a query's own time limit (a lease query's) as a limit on how long it may take, and waits past the silence limit for a server that answers the check", async () => {
    const silence: SilenceWatchConfig = { silenceLimitMs: () => 400 };
    const { pool, removed } = onePool({ Client: SocketClosingClient, ...silence } as pg.PoolConfig);
    const startedAt = performance.now();
    const own = await withPooledClient(pool, (client) =>
      client.query({ text: 'SELECT pg_sleep(5)', query_timeout: 300 } as pg.QueryConfig),
    ).catch((thrown: unknown) => thrown);
    expect(own).toBeInstanceOf(QueryTimedOut);
    expect((own as QueryTimedOut).timeoutMs).toBe(300);
    expect((own as QueryTimedOut).ownLimit).toBe(true);
    expect(performance.now() - startedAt).toBeLessThan(900);
    // Silent for three silence limits, but the server answers each check and still runs the query.
    const { rows } = await withPooledClient(pool, (client) =>
      client.query('SELECT pg_sleep(1.2), 42 AS answer'),
    );
    expect(rows[0].answer).toBe(42);
    // Only the client past its own limit was dropped.
    expect(removed()).toBe(1);
  });
});
