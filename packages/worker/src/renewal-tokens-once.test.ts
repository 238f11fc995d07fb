import { setTimeout as sleep } from 'node:timers/promises';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import { reportCrewFactory } from './test-support/report-crew.js';
import { Worker } from './worker.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describeWithPostgres('the tokens a renewal carries', () => {
  // Before: a renewal that timed out on the client (waiting on the row's lock past its 1 s
  // query_timeout) still applied on the server once the lock was released; its tokens were given
  // back to the attempt and added again by the next renewal (or the attempt's end): the row counted
  // more tokens than the checkpoints hold.
  it('are counted once on the row when a renewal timed out on the client but applied on the server', async () => {
    const location = temporaryLocation();
    const schema = new URL(location).searchParams.get('schema');
    const queue = new RunQueue({ location, create: true });
    let calls = 0;
    const worker = new Worker({
      location,
      runs: {
        crews: {
          report: reportCrewFactory({
            latencyMs: 900,
            onCall: () => {
              calls += 1;
            },
          }),
        },
      },
      pollIntervalMs: 60_000,
      leaseTtlMs: 4000,
    });
    cleanups.push(async () => {
      await worker.stop({ handBack: false });
      await queue.close();
      await dropLocation(location);
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    });
    const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' } });
    await worker.start();
    while (calls < 2) await sleep(10);
    // The row locked for 1.6 s: the renewal in this window (every 1.33 s) waits on the lock past its
    // 1 s timeout, and applies when the lock is released.
    await withServer(async (client) => {
      await client.query('BEGIN');
      await client.query(`SELECT 1 FROM "${schema}".worker_runs WHERE id = $1 FOR UPDATE`, [run.id]);
      await sleep(1600);
      await client.query('COMMIT');
    });
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 60_000 });
    const progress = await queue.progress(run.id);
    expect(ended?.status).toBe('completed');
    expect(progress.tokens.total).toBeGreaterThan(0);
    expect(ended?.tokens.total).toBe(progress.tokens.total);
  });
});
