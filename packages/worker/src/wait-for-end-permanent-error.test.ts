import { setTimeout as sleep } from 'node:timers/promises';
import { describeWithPostgres, testServerUrl, withServer } from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What `waitForEnd` (no timeoutMs) did within 8 s: rejected (with the error's message) or still polling. */
async function outcomeOf(waiting: Promise<unknown>): Promise<string> {
  const outcome = waiting.then(
    () => 'resolved',
    (error: unknown) => `rejected: ${(error as Error).message}`,
  );
  return Promise.race([outcome, sleep(8_000, 'still polling after 8 s')]);
}

// Before (fcba22a): any FATAL error counted as a lost connection, so both polled forever and said nothing.
describeWithPostgres('queue.waitForEnd without timeoutMs on a permanent error', () => {
  it('rejects with 3D000 when the database is dropped under it', async () => {
    const database = `wait_dropped_${Date.now()}`;
    await withServer((client) => client.query(`CREATE DATABASE ${database}`));
    const url = new URL(testServerUrl()!);
    url.pathname = `/${database}`;
    url.searchParams.set('schema', 'wait');
    const queue = new RunQueue({ location: url.toString(), create: true, poolSize: 1 });
    cleanups.push(async () => {
      await queue.close().catch(() => undefined);
      await withServer((client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
    });
    const { run } = await queue.enqueue('report', { inputs: {} });
    const waiting = queue.waitForEnd([run.id], { intervalMs: 100 });
    waiting.catch(() => undefined);
    await sleep(300);
    await withServer((client) => client.query(`DROP DATABASE ${database} WITH (FORCE)`));
    const outcome = await outcomeOf(waiting);
    expect(outcome).toMatch(/^rejected: .*does not exist/);
    await expect(waiting).rejects.toMatchObject({ code: '3D000' });
  });

  it('rejects with 28P01 when the role’s password is changed under it', async () => {
    const role = `wait_role_${Date.now()}`;
    await withServer((client) => client.query(`CREATE ROLE ${role} LOGIN PASSWORD 'one' SUPERUSER`));
    const url = new URL(testServerUrl()!);
    url.username = role;
    url.password = 'one';
    const schema = `wait_${Date.now()}`;
    url.searchParams.set('schema', schema);
    const queue = new RunQueue({ location: url.toString(), create: true, poolSize: 1 });
    cleanups.push(async () => {
      await queue.close().catch(() => undefined);
      await withServer(async (client) => {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`);
        await client.query(`DROP ROLE IF EXISTS ${role}`);
      });
    });
    const { run } = await queue.enqueue('report', { inputs: {} });
    const waiting = queue.waitForEnd([run.id], { intervalMs: 100 });
    waiting.catch(() => undefined);
    await sleep(300);
    await withServer(async (client) => {
      await client.query(`ALTER ROLE ${role} PASSWORD 'two'`);
      await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [role]);
    });
    const outcome = await outcomeOf(waiting);
    expect(outcome).toMatch(/^rejected: .*password/);
    await expect(waiting).rejects.toMatchObject({ code: '28P01' });
  });
});
