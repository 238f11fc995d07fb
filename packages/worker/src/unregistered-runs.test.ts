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
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import type { RunRecord } from './run-record.js';
import { startWorkerChild, type WorkerChild } from './test-support/children.js';
import { reportCrewFactory, uninterruptedOutput } from './test-support/report-crew.js';
import { Worker } from './worker.js';

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
  const startWorker = async (names: string[]) => {
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
    });
    workers.push(worker);
    await worker.start();
    return worker;
  };
  cleanups.push(async () => {
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
    const reportOnly = await startWorker(['report']);
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

    await startWorker(['slow']);
    // Which of two polling workers gets a run when it comes back is a race that either can win, each
    // time (README, "Workers that register different names"): with the other one stopped, the worker
    // that registers it must get it. (Under CI load the report worker won every window for 30 s.)
    await reportOnly.stop();
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
    const reportOnly = await startWorker(['report']);
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
    await sleep(1500);
    const still = await queue.require(run.id);
    expect(still, still.error ?? '').toMatchObject({ status: 'queued', attempts: 1, failures: 1 });
    expect(waiting.passedOver).toMatchObject({ registered: ['report'] });

    await startWorker(['slow']);
    // As above: with the report worker gone, the run's next window goes to the one that registers it.
    await reportOnly.stop();
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed', attempts: 2, failures: 1 });
    expect(ended!.output).toBe(await uninterruptedOutput('dunes'));
    // Task 0 was checkpointed before the kill: the new worker starts at the call the child died in.
    expect(calls.filter((call) => call.runId === run.id).map((call) => call.task)).toEqual([1, 2, 3]);
  });
});
