import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import PgBoss from 'pg-boss';
import { afterEach, expect, it } from 'vitest';
import { parseQueueLocation } from './connection.js';
import { QueueStore, RUNS_QUEUE } from './queue-store.js';
import { RunQueue } from './run-queue.js';
import { reportCrewFactory } from './test-support/report-crew.js';
import { UndeliveredRuns } from './undelivered-runs.js';
import { Worker } from './worker.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A queue with one run whose job a worker fetched and then died without claiming the run (SIGKILL,
 * OOM, its connection gone between the two statements): a pg-boss client of the test's own fetches
 * the job, then `end` says what became of the job after the death, and the client goes away.
 */
async function runFetchedByADeadWorker(end: 'left-active' | 'expired') {
  const location = temporaryLocation();
  const schema = new URL(location).searchParams.get('schema');
  const queue = new RunQueue({ location, create: true });
  const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' } });
  const url = new URL(location);
  url.search = '';
  const dead = new PgBoss({
    connectionString: url.href,
    schema: `${schema}_queue`,
    supervise: false,
    schedule: false,
    migrate: false,
  });
  dead.on('error', () => undefined);
  await dead.start();
  const [job] = await dead.fetch<{ runId: string }>(RUNS_QUEUE, { batchSize: 1 });
  expect(job?.data.runId).toBe(run.id);
  // pg-boss's expiry of an active job with no retries left marks it failed (after 23 h by default).
  if (end === 'expired')
    await dead.fail(RUNS_QUEUE, job!.id, { message: 'job failed by timeout in active state' });
  await dead.stop({ graceful: false, close: true, wait: true });
  const worker = new Worker({
    location,
    runs: { crews: { report: reportCrewFactory() } },
    leaseTtlMs: 1500,
    pollIntervalMs: 100,
    retryDelayMs: 200,
  });
  cleanups.push(async () => {
    await worker.stop({ handBack: false });
    await queue.close();
    await dropLocation(location);
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
  });
  return { location, queue, worker, run, lostJobId: job!.id };
}

describeWithPostgres('a run whose job was fetched by a worker that died before claiming it', () => {
  // Before: queued forever, 0 attempts (the job active until its 23 h expiry, then failed; no worker
  // fetches either again, and the reaper only looked at running rows).
  it('is sent again under a new job and completed by a live worker, once', async () => {
    const { queue, worker, run, lostJobId } = await runFetchedByADeadWorker('left-active');
    await worker.start();
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 15_000 });
    expect(ended).toMatchObject({ status: 'completed', attempts: 1, failures: 0 });
    expect(ended?.jobId).not.toBe(lostJobId);
  });

  it('is sent again when pg-boss expired the fetched job (failed, no retries)', async () => {
    const { queue, worker, run } = await runFetchedByADeadWorker('expired');
    await worker.start();
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 15_000 });
    expect(ended).toMatchObject({ status: 'completed', attempts: 1, failures: 0 });
  });

  it('re-sends only the run whose job is lost, beside 20,000 queued runs whose jobs wait', async () => {
    const { location, queue, run, lostJobId } = await runFetchedByADeadWorker('expired');
    const store = new QueueStore(parseQueueLocation(location), {
      poolSize: 1,
      applicationName: 'crewline-test-undelivered',
      maintenance: false,
      create: false,
    });
    cleanups.push(() => store.close());
    await store.start();
    // Waiting jobs (`created`, one delayed an hour) and a fetched one within the grace: none is lost.
    await store.pool.query(
      `WITH job AS (
         INSERT INTO "${store.location.queueSchema}".job (id, name, data, state, start_after, started_on)
         SELECT gen_random_uuid(), $1, '{}', CASE WHEN n = 1 THEN 'active' ELSE 'created' END::"${store.location.queueSchema}".job_state,
                now() + CASE WHEN n = 2 THEN interval '1 hour' ELSE interval '0' END,
                CASE WHEN n = 1 THEN now() END
           FROM generate_series(1, 20000) AS n RETURNING id)
       INSERT INTO ${store.table} (id, name, inputs, max_attempts, status, job_id)
       SELECT 'waiting-' || job.id, 'report', '{}', 5, 'queued', job.id::text FROM job`,
      [RUNS_QUEUE],
    );
    const sweep = new UndeliveredRuns(store, { claimGraceMs: 60_000 });
    expect(await sweep.resend()).toEqual([run.id]);
    expect((await queue.get(run.id))?.jobId).not.toBe(lostJobId);
    // Sent once: the next sweep finds its new job waiting.
    expect(await sweep.resend()).toEqual([]);
  });
});
