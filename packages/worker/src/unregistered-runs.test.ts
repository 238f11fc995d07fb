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
  const queue = new RunQueue({ location, create: true });
  const workers: Worker[] = [];
  const children: WorkerChild[] = [];
  const calls: { runId: string; task: number }[] = [];
  const logs: LogRecord[] = [];
  const previousSink = setLogSink((record) => logs.push(record));
  /** An in-process worker that registers the report crew under each of `names`. */
  const startWorker = async (
    names: string[],
    {
      latencyMs,
      ...timings
    }: Pick<WorkerOptions, 'pollIntervalMs' | 'retryDelayMs' | 'concurrency'> & {
      /** How long each model call of the crews takes. */
      latencyMs?: number;
    } = {},
  ) => {
    const crews = Object.fromEntries(
      names.map((name) => [
        name,
        reportCrewFactory({ latencyMs, onCall: (runId, task) => calls.push({ runId, task }) }),
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

/** A store of the queue of its own, as another client of it (closed after the test). */
function openStore(location: string): QueueStore {
  const store = new QueueStore(parseQueueLocation(location), {
    poolSize: 1,
    applicationName: 'crewline-test',
    maintenance: false,
    create: false,
  });
  cleanups.push(() => store.close());
  return store;
}

/**
 * A queued run of `name` with a job delayed by `delayMs`, sent in a transaction that announces
 * nothing; `passed over` marks it as a worker of the previous version (layout 3) left it when it
 * handed it back. Returns the run's id and the job's.
 */
async function insertQueuedRun(
  store: QueueStore,
  name: string,
  delayMs: number,
  passedOver: boolean,
): Promise<{ runId: string; jobId: string }> {
  const runId = randomUUID();
  const jobId = await store.transaction(async (client) => {
    const jobId = await store.sendAttempt(client, { id: runId, priority: 0, timeoutMs: null }, delayMs);
    await client.query(
      `INSERT INTO ${store.table} (id, name, inputs, max_attempts, status, job_id, passed_over)
       VALUES ($1, $2, '{"topic":"reefs"}', 5, 'queued', $3,
               CASE WHEN $4 THEN jsonb_build_object('worker', 'worker 0ld on web-1, pid 7', 'registered', '["report"]'::jsonb, 'at', now(), 'times', 1) END)`,
      [runId, name, jobId, passedOver],
    );
    return jobId;
  });
  return { runId, jobId };
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
    const store = openStore(location);
    await startWorker(['slow'], { pollIntervalMs: 200 });
    const run = await insertQueuedRun(store, 'slow', 10_000, true);
    const [ended] = await queue.waitForEnd([run.runId], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed', attempts: 1, jobId: null });
    const job = await store.boss.getJobById(RUNS_QUEUE, run.jobId, { includeArchive: true });
    // Taken before its job came due (it would have been then, by the job): the job was withdrawn.
    expect(job?.state).toBe('cancelled');
    expect(ended!.finishedAt!.getTime()).toBeLessThan(job!.startAfter.getTime());
  });

  it('a withdrawal of the delayed job that hangs holds up neither the start of the run taken by name nor its renewals, and the job, delivered, claims nothing', async () => {
    const { location, queue, calls, startWorker } = setUp();
    const store = openStore(location);
    // A connection that never answers the cancel: before, the claim waited for it, so the run never
    // started (with a slow answer: it started late, unrenewed, its hold perhaps already taken).
    const withdrawals: string[] = [];
    vi.spyOn(QueueStore.prototype, 'withdrawAttempt').mockImplementation((jobId) => {
      withdrawals.push(jobId);
      return new Promise(() => undefined);
    });
    // Four calls of 600 ms: the run outlasts its 1.5 s hold, which only renewals keep.
    await startWorker(['slow'], { pollIntervalMs: 200, latencyMs: 600 });
    // Its job comes due while the run runs: the worker that fetches it must not claim the run again.
    const run = await insertQueuedRun(store, 'slow', 1000, true);
    const leases = new Set<number>();
    for (let waited = 0; ; waited += 50) {
      const current = await queue.require(run.runId);
      if (current.leaseExpiresAt !== null) leases.add(current.leaseExpiresAt.getTime());
      if (current.finishedAt !== null) break;
      expect(waited, `run ${run.runId} never ended: ${JSON.stringify(current)}`).toBeLessThan(20_000);
      await sleep(50);
    }
    const ended = await queue.require(run.runId);
    expect(ended, ended.error ?? '').toMatchObject({ status: 'completed', attempts: 1, failures: 0 });
    expect(withdrawals).toEqual([run.jobId]);
    // Renewed: the hold's end moved on while the run ran.
    expect(leases.size).toBeGreaterThan(1);
    expect(calls.filter((call) => call.runId === run.runId).map((call) => call.task)).toEqual([0, 1, 2, 3]);
    // The job was delivered after all (nothing withdrew it) and completed as a stale delivery.
    for (let waited = 0; ; waited += 50) {
      const job = await store.boss.getJobById(RUNS_QUEUE, run.jobId, { includeArchive: true });
      if (job?.state === 'completed') break;
      expect(waited, `job ${run.jobId}: ${job?.state}`).toBeLessThan(20_000);
      await sleep(50);
    }
    expect(await queue.require(run.runId)).toMatchObject({ status: 'completed', attempts: 1 });
  });

  it('an idle worker that registers the name takes a handed-back run at once, woken by the notice of the hand-back, not at its next poll', async () => {
    const { location, queue, startWorker } = setUp();
    const handBacks = countHandBacks();
    const store = openStore(location);
    // It polls every 30 s: only a notice takes it out of its wait before then.
    await startWorker(['slow'], { pollIntervalMs: 30_000 });
    // Without the notice this worker hands the run back again when its job comes due (5 s later,
    // then 10 s), and the first worker takes it at its next poll only.
    await startWorker(['report'], { pollIntervalMs: 20, retryDelayMs: 5000 });
    // Delayed and announced to nobody, so it is the worker without the name that fetches it first
    // (polling every 20 ms), not the one with it, which is idle by then.
    const run = await insertQueuedRun(store, 'slow', 1000, false);
    const [ended] = await queue.waitForEnd([run.runId], { timeoutMs: 4000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed', attempts: 1, failures: 0 });
    // Handed back once, then taken by name before its delayed job (+5 s) could be handed back again.
    expect(handBacks.get(run.runId)).toBe(1);
  });
});
