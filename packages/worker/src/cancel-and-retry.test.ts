import { setTimeout as sleep } from 'node:timers/promises';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import { type ReportCrewOptions, reportCrewFactory } from './test-support/report-crew.js';
import { Worker } from './worker.js';
import type { HoldChange, WorkerOptions } from './worker-options.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(crew: ReportCrewOptions, options: Partial<WorkerOptions>) {
  const location = temporaryLocation();
  const queue = new RunQueue({ location, create: true });
  const calls: { runId: string; task: number }[] = [];
  const released: HoldChange[] = [];
  const worker = new Worker({
    location,
    runs: {
      crews: { report: reportCrewFactory({ ...crew, onCall: (runId, task) => calls.push({ runId, task }) }) },
    },
    pollIntervalMs: 100,
    onHold: (change) => {
      if (change.change === 'released') released.push(change);
    },
    ...options,
  });
  const schema = new URL(location).searchParams.get('schema');
  cleanups.push(async () => {
    await worker.stop({ handBack: false });
    await queue.close();
    await dropLocation(location);
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
  });
  return { queue, worker, calls, released, schema };
}

async function until(found: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !found(); waited += 20) {
    if (waited > 30_000) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describeWithPostgres('a worker stops a cancelled run and waits out retries', () => {
  it('stops a cancelled running run within a poll, not at its next renewal: the next model call is never made', async () => {
    // A lease of a minute renews every 20 s: a cancel that waited for the renewal would let this
    // run's four one-second calls all happen (and its end would be refused as lost).
    const { queue, worker, calls, released } = await setUp({ latencyMs: 1000 }, { leaseTtlMs: 60_000 });
    const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' } });
    await worker.start();
    await until(() => calls.some((call) => call.task === 1), 'the second model call');
    await queue.cancel(run.id);
    await until(() => released.length > 0, 'the hold to be given up');
    expect(released).toMatchObject([{ runId: run.id, outcome: 'cancelled' }]);
    expect(calls.map((call) => call.task)).toEqual([0, 1]);
    expect(await queue.get(run.id)).toMatchObject({ status: 'cancelled', output: null });
  });

  it('waits a sub-second retry delay to the millisecond, not rounded up to a whole second', async () => {
    const { queue, worker, schema } = await setUp(
      { failWhen: (task, attempt) => task === 1 && attempt === 1 },
      { leaseTtlMs: 3000, retryDelayMs: 500 },
    );
    const { run } = await queue.enqueue('report', { inputs: { topic: 'kelp' } });
    await worker.start();
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(ended).toMatchObject({ status: 'completed', attempts: 2, failures: 1 });
    // Both times from the server's clock, written by the statement that sent the retry's job.
    const jobs = await withServer((client) =>
      client.query<{ delay: number }>(
        `SELECT extract(epoch FROM start_after - created_on) * 1000 AS delay FROM "${schema}_queue".job
          WHERE data->>'runId' = $1 ORDER BY created_on`,
        [run.id],
      ),
    );
    expect(jobs.rows).toHaveLength(2);
    const delay = Number(jobs.rows[1]!.delay);
    // 500 ms ± 20 % back-off jitter.
    expect(delay).toBeGreaterThanOrEqual(400);
    expect(delay).toBeLessThanOrEqual(600);
  });
});
