import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { withPooledClient } from './pooled-client.js';
import { describeWithPostgres, testServerUrl } from './test-support/test-server.js';

const pools: pg.Pool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.end();
});

function onePool(): { pool: pg.Pool; removed: () => number } {
  const pool = new pg.Pool({ connectionString: testServerUrl(), max: 1 });
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
});
