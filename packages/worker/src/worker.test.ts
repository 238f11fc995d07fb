import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CrewlineError } from '@crewline/events';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import {
  type ReportCrewOptions,
  reportCrewFactory,
  taskDescriptions,
  uninterruptedOutput,
} from './test-support/report-crew.js';
import { Worker, type WorkerOptions } from './worker.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setUp(crew: ReportCrewOptions = {}, workerOptions: Partial<WorkerOptions> = {}) {
  const location = temporaryLocation();
  const queue = new RunQueue({ location, create: true });
  const calls: { runId: string; task: number }[] = [];
  const workers: Worker[] = [];
  const startWorker = async (extra: Partial<WorkerOptions> = {}) => {
    const worker = new Worker({
      location,
      runs: {
        crews: {
          report: reportCrewFactory({ ...crew, onCall: (runId, task) => calls.push({ runId, task }) }),
        },
      },
      concurrency: 2,
      leaseTtlMs: 1500,
      pollIntervalMs: 100,
      retryDelayMs: 300,
      ...workerOptions,
      ...extra,
    });
    workers.push(worker);
    await worker.start();
    return worker;
  };
  cleanups.push(async () => {
    await Promise.all(workers.map((worker) => worker.stop({ handBack: false })));
    await queue.close();
    await dropLocation(location);
    await withServer((client) =>
      client.query(`DROP SCHEMA IF EXISTS "${new URL(location).searchParams.get('schema')}_queue" CASCADE`),
    );
  });
  return { location, queue, calls, startWorker };
}

let expected: Record<string, string>;
beforeAll(async () => {
  expected = {};
  for (const topic of ['tides', 'kelp', 'dunes']) expected[topic] = await uninterruptedOutput(topic);
});

describeWithPostgres('a worker', () => {
  it('runs enqueued crews to the output of an uninterrupted run, with progress by run id', async () => {
    const { queue, calls, startWorker } = setUp();
    const runs = await Promise.all(
      ['tides', 'kelp', 'dunes'].map((topic) => queue.enqueue('report', { inputs: { topic } })),
    );
    expect(runs.map((run) => run.run.status)).toEqual(['queued', 'queued', 'queued']);
    await startWorker();
    const ended = await queue.waitForEnd(
      runs.map((run) => run.run.id),
      { timeoutMs: 30_000 },
    );
    for (const [index, topic] of ['tides', 'kelp', 'dunes'].entries()) {
      const run = ended[index]!;
      expect(run, run.error ?? '').toMatchObject({
        status: 'completed',
        attempts: 1,
        failures: 0,
        worker: null,
      });
      expect(run.output).toBe(expected[topic]);
      expect(run.lineageId).toMatch(/\S/);
      expect(run.lastCheckpoint).toContain(`#`);
      expect(run.lastCheckpoint).not.toContain(':postgres-test-password');
      expect(run.currentTask).toBe(taskDescriptions[3]!.replace('{topic}', topic));
      expect(run.tokens.input).toBeGreaterThan(0);
      expect(run.tokens.output).toBeGreaterThan(0);
      expect(calls.filter((call) => call.runId === run.id).map((call) => call.task)).toEqual([0, 1, 2, 3]);
    }
  });

  it('gives the same run for the same idempotency key, and refuses the key for another name', async () => {
    const { queue } = setUp();
    const first = await queue.enqueue('report', { inputs: { topic: 'tides' }, idempotencyKey: 'order-17' });
    const again = await queue.enqueue('report', { inputs: { topic: 'other' }, idempotencyKey: 'order-17' });
    expect(first.created).toBe(true);
    expect(again).toMatchObject({ created: false, run: { id: first.run.id, inputs: { topic: 'tides' } } });
    const concurrent = await Promise.all(
      [1, 2, 3, 4].map(() =>
        queue.enqueue('report', { inputs: { topic: 'kelp' }, idempotencyKey: 'order-18' }),
      ),
    );
    expect(new Set(concurrent.map((result) => result.run.id)).size).toBe(1);
    expect(concurrent.filter((result) => result.created)).toHaveLength(1);
    await expect(queue.enqueue('summary', { idempotencyKey: 'order-17' })).rejects.toSatisfy(
      (error) => CrewlineError.hasCode(error, 'conflict') && /order-17.*report/.test(error.message),
    );
    expect(await queue.list()).toHaveLength(2);
  });

  // A name the worker does not register is handed back, never failed: unregistered-runs.test.ts.
  it('fails a run once, unretried, for inputs its factory refuses', async () => {
    const { queue, calls, startWorker } = setUp();
    const bad = await queue.enqueue('report', { inputs: {} });
    await startWorker();
    const [badRun] = await queue.waitForEnd([bad.run.id], { timeoutMs: 20_000 });
    expect(badRun).toMatchObject({ status: 'failed', attempts: 1, errorCode: 'invalid_argument' });
    expect(badRun!.error).toContain('inputs.topic is required');
    expect(calls).toEqual([]);
  });

  it('retries a run that failed for a passing reason, with back-off, from its latest checkpoint', async () => {
    // The first attempt's call on task 2 fails; the second attempt continues there.
    const { queue, calls, startWorker } = setUp({ failWhen: (task, attempt) => task === 2 && attempt === 1 });
    const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' } });
    await startWorker();
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed', attempts: 2, failures: 1 });
    expect(ended!.output).toBe(expected.tides);
    expect(ended!.error).toContain('made to fail by the test');
    // Tasks 0 and 1 were checkpointed: never asked again. Task 2 was asked twice (the failed call).
    expect(calls.map((call) => call.task)).toEqual([0, 1, 2, 2, 3]);
  });

  it('fails a run after maxAttempts failed attempts, with the reason', async () => {
    const { queue, startWorker } = setUp({ failWhen: (task) => task === 1 });
    const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' }, maxAttempts: 2 });
    await startWorker();
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(ended).toMatchObject({ status: 'failed', attempts: 2, failures: 2 });
    expect(ended!.error).toMatch(/made to fail by the test.*failed 2 of 2 attempts/);
  });

  it('cancels a queued run (never taken) and a running one (stopped mid-call)', async () => {
    const { queue, calls, startWorker } = setUp({ latencyMs: 1000 });
    const queued = await queue.enqueue('report', { inputs: { topic: 'tides' } });
    expect(await queue.cancel(queued.run.id)).toMatchObject({ status: 'cancelled' });
    const running = await queue.enqueue('report', { inputs: { topic: 'kelp' } });
    await startWorker();
    for (
      let waited = 0;
      !calls.some((call) => call.runId === running.run.id && call.task === 1);
      waited += 50
    ) {
      if (waited > 20_000) throw new Error('the run never reached its second task');
      await sleep(50);
    }
    await queue.cancel(running.run.id);
    await sleep(1500);
    const [cancelledQueued, cancelledRunning] = await queue.waitForEnd([queued.run.id, running.run.id]);
    expect(cancelledQueued).toMatchObject({ status: 'cancelled', attempts: 0 });
    expect(cancelledRunning).toMatchObject({ status: 'cancelled', attempts: 1, output: null });
    expect(calls.filter((call) => call.runId === queued.run.id)).toEqual([]);
    // Stopped in its second task: the third was never started.
    expect(calls.filter((call) => call.runId === running.run.id).map((call) => call.task)).toEqual([0, 1]);
    expect(await queue.cancel(running.run.id)).toMatchObject({ status: 'cancelled' });
  });

  it('fails an attempt that runs past the run timeout, unretried', async () => {
    const { queue, startWorker } = setUp({ latencyMs: 500 });
    const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' }, timeoutMs: 700 });
    await startWorker();
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 20_000 });
    expect(ended).toMatchObject({ status: 'failed', attempts: 1, errorCode: 'aborted' });
    expect(ended!.error).toContain('timed out after 700 ms');
  });

  it('hands its runs back when stopped: another worker continues them, no checkpointed call is made again', async () => {
    const { queue, calls, startWorker } = setUp({ latencyMs: 300 });
    const { run } = await queue.enqueue('report', { inputs: { topic: 'dunes' } });
    const first = await startWorker();
    for (let waited = 0; !calls.some((call) => call.task === 1); waited += 20) {
      if (waited > 20_000) throw new Error('the run never reached its second task');
      await sleep(20);
    }
    await first.stop({ handBack: true });
    const handedBack = await queue.get(run.id);
    expect(handedBack).toMatchObject({ status: 'queued', attempts: 1, failures: 0, worker: null });
    await startWorker();
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(ended).toMatchObject({ status: 'completed', attempts: 2, failures: 0, output: expected.dunes });
    // The call in flight when the worker stopped (task 1) was finished and checkpointed, not repeated.
    expect(calls.map((call) => call.task)).toEqual([0, 1, 2, 3]);
  });

  it('takes a run enqueued while it is idle when it commits, not at its next poll; and again after losing its listener', async () => {
    // Idle slots asked for a run every pollIntervalMs only: a run enqueued elsewhere waited up to that
    // long before its first model call (the bench's queue overhead was mostly this wait).
    const { location, queue, startWorker } = setUp({}, { pollIntervalMs: 120_000 });
    await startWorker();
    await sleep(300);
    const first = await queue.enqueue('report', { inputs: { topic: 'tides' } });
    const [firstEnded] = await queue.waitForEnd([first.run.id], { timeoutMs: 30_000 });
    expect(firstEnded!.status).toBe('completed');

    // The listener's connection dies (a server restart, a proxy): it comes back, and so does the wake.
    const schema = new URL(location).searchParams.get('schema')!;
    const channel = `crewline_runs_${createHash('sha256').update(schema).digest('hex').slice(0, 16)}`;
    const terminated = await withServer((client) =>
      client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
        `crewline-worker-wake ${channel}`,
      ]),
    );
    expect(terminated.rowCount).toBe(1);
    await sleep(1500);
    const second = await queue.enqueue('report', { inputs: { topic: 'kelp' } });
    const [secondEnded] = await queue.waitForEnd([second.run.id], { timeoutMs: 30_000 });
    expect(secondEnded!.output).toBe(expected.kelp);
  });
});
