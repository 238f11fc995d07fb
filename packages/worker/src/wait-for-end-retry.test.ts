import { setTimeout as sleep } from 'node:timers/promises';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describeWithPostgres('queue.waitForEnd', () => {
  // Before: rejected with "terminating connection due to administrator command" at the first poll
  // that lost its connection. Without timeoutMs it still was: the first poll of a wait got none of the
  // tolerance its later polls get, though its queue had reached the server to enqueue the run.
  it.each([
    ['with timeoutMs', { timeoutMs: 20_000 }],
    ['without timeoutMs', {}],
  ])(
    'polls again after its connection is ended under its first poll (a restart or failover), %s, and resolves when the run ends',
    async (_, limit: { timeoutMs?: number }) => {
      const location = temporaryLocation();
      const schema = new URL(location).searchParams.get('schema');
      const queue = new RunQueue({ location, create: true, poolSize: 1 });
      const other = new RunQueue({ location });
      cleanups.push(async () => {
        await other.close();
        await queue.close();
        await dropLocation(location);
        await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
      });
      const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' } });
      await withServer(async (blocker) => {
        // The table locked, so the next poll waits on the server, where it is ended as a restart would.
        await blocker.query('BEGIN');
        await blocker.query(`LOCK TABLE "${schema}".worker_runs IN ACCESS EXCLUSIVE MODE`);
        const waiting = queue.waitForEnd([run.id], { intervalMs: 50, ...limit }).then(
          (records) => ({ records }),
          (error: unknown) => ({ error }),
        );
        let ended = 0;
        for (let waited = 0; ended === 0 && waited < 10_000; waited += 50) {
          await sleep(50);
          const { rows } = await blocker.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE application_name = 'crewline-queue' AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
          );
          ended = rows.length;
        }
        expect(ended).toBe(1);
        await blocker.query('COMMIT');
        await sleep(300);
        await other.cancel(run.id);
        const outcome = await waiting;
        expect(outcome).toMatchObject({ records: [{ id: run.id, status: 'cancelled' }] });
      });
    },
  );
});
