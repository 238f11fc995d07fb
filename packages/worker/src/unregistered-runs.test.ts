import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type LogRecord, setLogSink } from '@crewline/events';
import {
  describeWithPostgres,
  dropLocation,
  serverPassword,
  temporaryLocation,
  testServerUrl,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it, vi } from 'vitest';
import { parseQueueLocation } from './connection.js';
import { QueueStore, RUNS_QUEUE } from './queue-store.js';
import { RunQueue } from './run-queue.js';
import type { RunRecord } from './run-record.js';
import { startWorkerChild, type WorkerChild } from './test-support/children.js';
import { reportCrewFactory, uninterruptedOutput } from './test-support/report-crew.js';
import { UnregisteredRuns } from './unregistered-runs.js';
import { Worker, type WorkerOptions } from './worker.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setUp() {
  const location = temporaryLocation();
  const queue = new RunQueue({ location });
  const workers: Worker[] = [];
  const children: WorkerChild[] = [];
  const calls: { runId: string; task: number }[] = [];
  const logs: LogRecord[] = [];
  const previousSink = setLogSink((record) => logs.push(record));
  /** An in-process worker that registers the report crew under each of `names`. */
  const startWorker = async (
    names: string[],
    timings: Pick<WorkerOptions, 'pollIntervalMs' | 'retryDelayMs' | 'concurrency'> = {},
  ) => {
    const crews = Object.fromEntries(
      names.map((name) => [
        name,
        reportCrewFactory({ onCall: (runId, task) => calls.push({ runId, task }) }),
      ]),
    );
    const worker = new Worker({
      location,
      runs: { crews },
      leaseTtlMs: 1500,
      pollIntervalMs: 100,
      retryDelayMs: 300,
      ...timings,
    });
    workers.push(worker);
    await worker.start();
    return worker;
  };
  cleanups.push(async () => {
    vi.restoreAllMocks();
    setLogSink(previousSink);
    for (const child of children) child.process.kill('SIGKILL');
    await Promise.all(workers.map((worker) => worker.stop({ handBack: false })));
    await queue.close();
    await dropLocation(location);
    await withServer((client) =>
      client.query(`DROP SCHEMA IF EXISTS "${new URL(location).searchParams.get('schema')}_queue" CASCADE`),
    );
  });
  return { location, queue, calls, logs, children, startWorker };
}

/** Counts the hand-backs of each run as they happen (a stale delivery hands nothing back). */
function countHandBacks(): Map<string, number> {
  const counts = new Map<string, number>();
  const handBack = UnregisteredRuns.prototype.handBack;
  vi.spyOn(UnregisteredRuns.prototype, 'handBack').mockImplementation(async function (
    this: UnregisteredRuns,
    runId: string,
    jobId: string,
  ) {
    const name = await handBack.call(this, runId, jobId);
    if (name !== undefined) counts.set(runId, (counts.get(runId) ?? 0) + 1);
    return name;
  });
  return counts;
}

async function until(
  queue: RunQueue,
  runId: string,
  done: (run: RunRecord) => boolean,
  what: string,
): Promise<RunRecord> {
  for (let waited = 0; waited < 30_000; waited += 50) {
    const run = await queue.require(runId);
    if (done(run)) return run;
    if (run.finishedAt !== null) break;
    await sleep(50);
  }
  throw new Error(`run ${runId} ended, or never ${what}: ${JSON.stringify(await queue.get(runId))}`);
}

describeWithPostgres('a run of a name the worker does not register', () => {
  it('is handed back untouched (no attempt, no failure), warned of once per name, and completed by a worker that registers it', async () => {
    const { queue, calls, logs, startWorker } = setUp();
    await startWorker(['report']);
    const first = await queue.enqueue('slow', { inputs: { topic: 'tides' } });
    const second = await queue.enqueue('slow', { inputs: { topic: 'kelp' } });
    // Passed over twice at least: the run comes back to the same worker after the delay.
    const waiting = await until(
      queue,
      first.run.id,
      (run) => (run.passedOver?.times ?? 0) >= 2,
      'passed over',
    );
    // Before the fix: failed for good, "no crew or flow is registered as "slow" in this worker".
    expect(waiting).toMatchObject({ status: 'queued', attempts: 0, failures: 0, error: null, worker: null });
    expect(waiting.passedOver).toMatchObject({ registered: ['report'] });
    expect(waiting.passedOver!.worker).toMatch(/^worker \w+ on /);
    await until(queue, second.run.id, (run) => run.passedOver !== null, 'passed over');
    const warnings = logs.filter((record) => record.message.includes('registered as "slow"'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain('handed back untouched');

    // The report worker goes on polling: the one that registers `slow` takes the runs by name, not
    // by winning a window of their jobs (under CI load the report worker won every window for 30 s).
    await startWorker(['slow']);
    const ended = await queue.waitForEnd([first.run.id, second.run.id], { timeoutMs: 30_000 });
    for (const run of ended) {
      expect(run, run.error ?? '').toMatchObject({ status: 'completed', attempts: 1, failures: 0 });
      expect(run.passedOver).toBeNull();
    }
    expect(ended[0]!.output).toBe(await uninterruptedOutput('tides'));
    expect(calls.filter((call) => call.runId === first.run.id).map((call) => call.task)).toEqual([
      0, 1, 2, 3,
    ]);
  });

  it('a crashed run retried while only a worker without its name is up waits for one with it, and no checkpointed call is made again', async () => {
    const { location, queue, calls, children, startWorker } = setUp();
    const directory = mkdtempSync(join(tmpdir(), 'crewline-unregistered-'));
    cleanups.push(async () => rmSync(directory, { recursive: true, force: true }));
    const childLocation = new URL(location);
    childLocation.password = '';
    const child = startWorkerChild(
      {
        location: childLocation.href,
        callLog: join(directory, 'calls.log'),
        concurrency: 1,
        leaseTtlMs: 1500,
        latencyMs: 400,
        name: 'slow',
      },
      { PGPASSWORD: serverPassword(testServerUrl()!) },
    );
    children.push(child);
    await child.waitFor(/^ready$/);
    await startWorker(['report']);
    const { run } = await queue.enqueue('slow', { inputs: { topic: 'dunes' } });
    // Killed in the middle of its second model call: the first one's completion is checkpointed.
    await child.waitFor(new RegExp(`^call ${run.id} 1 `));
    child.process.kill('SIGKILL');
    await child.exit;
    // The reaper of the worker that registers only `report` puts the run back; that worker then gets
    // its retry and must hand it back, not fail it.
    const waiting = await until(
      queue,
      run.id,
      (current) => current.failures === 1 && current.passedOver !== null,
      'retried and passed over',
    );
    // Counted in windows, not waited for: passed over again when its delayed job came due.
    const still = await until(
      queue,
      run.id,
      (current) => (current.passedOver?.times ?? 0) >= 2,
      'passed over again',
    );
    expect(still, still.error ?? '').toMatchObject({ status: 'queued', attempts: 1, failures: 1 });
    expect(waiting.passedOver).toMatchObject({ registered: ['report'] });

    // As above, with the report worker still polling.
    await startWorker(['slow']);
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed', attempts: 2, failures: 1 });
    expect(ended!.output).toBe(await uninterruptedOutput('dunes'));
    // Task 0 was checkpointed before the kill: the new worker starts at the call the child died in.
    expect(calls.filter((call) => call.runId === run.id).map((call) => call.task)).toEqual([1, 2, 3]);
  });

  it('goes to an idle worker that registers its name within its poll interval, however often a worker without it polls', async () => {
    const { queue, calls, startWorker } = setUp();
    const handBacks = countHandBacks();
    // Polling every 10 ms, it is first at every window in which a passed-over run can be taken again
    // (100 ms after a pass, then 200, 400 …): before, the worker that registers the name polled
    // once a second and won about one window in a hundred, so its runs waited window after window.
    await startWorker(['report'], { pollIntervalMs: 10, retryDelayMs: 100, concurrency: 3 });
    const enqueueRound = async (round: number) =>
      Promise.all(
        [1, 2, 3].map(
          async (index) =>
            (await queue.enqueue('slow', { inputs: { topic: `round ${round} run ${index}` } })).run.id,
        ),
      );
    // Round 0 is passed over before any worker registers `slow`; later rounds race both workers.
    const waiting = await enqueueRound(0);
    for (const runId of waiting) await until(queue, runId, (run) => run.passedOver !== null, 'passed over');
    handBacks.clear();
    // Two of them, so that they race for each passed-over run as well: one holder each, one attempt.
    await startWorker(['slow'], { pollIntervalMs: 1000, concurrency: 3 });
    await startWorker(['slow'], { pollIntervalMs: 1000, concurrency: 3 });
    // Within one poll interval (1 s) of the workers that register `slow`, a run can be passed over at
    // most four times (its first delivery, then at +100, +300 and +700 ms): a fifth means the workers
    // with the name let a window go by while they were idle.
    const mostHandBacks = 4;
    for (let round = 0; round < 5; round += 1) {
      const runIds = round === 0 ? waiting : await enqueueRound(round);
      for (;;) {
        const over = runIds.filter((runId) => (handBacks.get(runId) ?? 0) > mostHandBacks);
        expect(over.map((runId) => `${runId} handed back ${handBacks.get(runId)} times`)).toEqual([]);
        const runs = await Promise.all(runIds.map((runId) => queue.require(runId)));
        if (runs.every((run) => run.finishedAt !== null)) {
          for (const run of runs) {
            expect(run, run.error ?? '').toMatchObject({ status: 'completed', attempts: 1, failures: 0 });
            const tasks = calls.filter((call) => call.runId === run.id).map((call) => call.task);
            expect(tasks, `the model calls of run ${run.id}`).toEqual([0, 1, 2, 3]);
          }
          break;
        }
        await sleep(20);
      }
    }
  });

  it('a run an earlier version passed over (a delayed job, no notice) is taken by name at the next poll, its job withdrawn', async () => {
    const { location, queue, startWorker } = setUp();
    const store = new QueueStore(parseQueueLocation(location), {
      poolSize: 1,
      applicationName: 'crewline-test',
      maintenance: false,
    });
    cleanups.push(() => store.close());
    await startWorker(['slow'], { pollIntervalMs: 200 });
    // A queued run as a worker of the previous version (layout 3) left it when it handed it back: a
    // job delayed by up to 10 s and `passed_over` on the row, in a transaction that announces nothing.
    const run = { id: randomUUID() };
    const delayedJob = await store.transaction(async (client) => {
      const jobId = await store.sendAttempt(client, { id: run.id, priority: 0, timeoutMs: null }, 10_000);
      await client.query(
        `INSERT INTO ${store.table} (id, name, inputs, max_attempts, status, job_id, passed_over)
         VALUES ($1, 'slow', '{"topic":"reefs"}', 5, 'queued', $2,
                 jsonb_build_object('worker', 'worker 0ld on web-1, pid 7', 'registered', '["report"]'::jsonb, 'at', now(), 'times', 1))`,
        [run.id, jobId],
      );
      return jobId;
    });
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed', attempts: 1, jobId: null });
    const job = await store.boss.getJobById(RUNS_QUEUE, delayedJob, { includeArchive: true });
    // Taken before its job came due (it would have been then, by the job): the job was withdrawn.
    expect(job?.state).toBe('cancelled');
    expect(ended!.finishedAt!.getTime()).toBeLessThan(job!.startAfter.getTime());
  });
});
