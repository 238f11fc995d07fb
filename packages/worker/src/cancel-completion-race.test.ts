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
import type { HoldChange } from './worker-options.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(found: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !found(); waited += 20) {
    if (waited > 30_000) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * One run cancelled when its last model call (task 3) starts, by a worker that does not look for
 * cancels during the test (`pollIntervalMs` of a minute): the attempt ends as `leaseTtlMs` lets it.
 */
async function cancelAtTheLastCall(options: { latencyMs: number; leaseTtlMs: number }) {
  const location = temporaryLocation();
  const schema = new URL(location).searchParams.get('schema');
  const queue = new RunQueue({ location, create: true });
  const cancels: Promise<unknown>[] = [];
  const released: HoldChange[] = [];
  const worker = new Worker({
    location,
    runs: {
      crews: {
        report: reportCrewFactory({
          latencyMs: options.latencyMs,
          onCall: (runId, task) => {
            if (task === 3) cancels.push(queue.cancel(runId));
          },
        }),
      },
    },
    pollIntervalMs: 60_000,
    leaseTtlMs: options.leaseTtlMs,
    onHold: (change) => {
      if (change.change === 'released') released.push(change);
    },
  });
  cleanups.push(async () => {
    await worker.stop({ handBack: false });
    await queue.close();
    await dropLocation(location);
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
  });
  const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' } });
  await worker.start();
  await until(() => released.length > 0, 'the hold to be given up');
  await Promise.all(cancels);
  const row = await queue.get(run.id);
  const progress = await queue.progress(run.id);
  return { row, progress, released: released[0] };
}

describeWithPostgres('a run cancelled as its attempt ends', () => {
  // Before: cancelled with 0 tokens on the row (the completion matched no held row and dropped
  // them), while its checkpoints hold the four calls' tokens.
  it('keeps the tokens of an attempt that completed after the cancel', async () => {
    // A lease of a minute: no renewal, so every token reaches the row through the attempt's end.
    const { row, progress, released } = await cancelAtTheLastCall({ latencyMs: 50, leaseTtlMs: 60_000 });
    expect(row).toMatchObject({ status: 'cancelled', worker: null, output: null });
    expect(released?.outcome).toBe('cancelled');
    expect(progress.modelCalls).toBe(4);
    expect(progress.tokens.total).toBeGreaterThan(0);
    expect(row?.tokens.total).toBe(progress.tokens.total);
  });

  // Before: the renewal that found the run cancelled took the attempt's tokens since the last
  // renewal, matched no row and dropped them.
  it('keeps the tokens a renewal took when it found the run cancelled', async () => {
    // Renewed every 500 ms, each call 1.2 s: the renewal after the cancel finds it, mid-call.
    const { row, progress } = await cancelAtTheLastCall({ latencyMs: 1200, leaseTtlMs: 1500 });
    expect(row).toMatchObject({ status: 'cancelled', worker: null, output: null });
    expect(progress.tokens.total).toBeGreaterThan(0);
    expect(row?.tokens.total).toBe(progress.tokens.total);
  });

  // Before: 0 on the row (the renewal that found the hold taken over took the tokens and dropped
  // them, and the stale attempt's end wrote nothing).
  it('adds the tokens of an attempt whose hold another worker took over, and nothing else', async () => {
    const location = temporaryLocation();
    const schema = new URL(location).searchParams.get('schema');
    const queue = new RunQueue({ location, create: true });
    const calls: number[] = [];
    const released: HoldChange[] = [];
    const worker = new Worker({
      location,
      runs: {
        crews: { report: reportCrewFactory({ latencyMs: 300, onCall: (_runId, task) => calls.push(task) }) },
      },
      pollIntervalMs: 100,
      leaseTtlMs: 1500,
      onHold: (change) => {
        if (change.change === 'released') released.push(change);
      },
    });
    cleanups.push(async () => {
      await worker.stop({ handBack: false });
      await queue.close();
      await dropLocation(location);
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    });
    const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' } });
    await worker.start();
    await until(() => calls.includes(1), 'the second model call');
    // Another worker's hold, as after a reaper gave the run away (its lease far off: no reap here),
    // with the counts zeroed so that what remains is what the stale attempt adds.
    await withServer((client) =>
      client.query(
        `UPDATE "${schema}".worker_runs SET holder_token = 'another-worker', worker = 'another',
                lease_expires_at = now() + interval '1 hour', input_tokens = 0, output_tokens = 0,
                current_task = 'not-this-attempt' WHERE id = $1`,
        [run.id],
      ),
    );
    await until(() => released.length > 0, 'the hold to be found lost');
    expect(released[0]?.outcome).toBe('lost');
    const row = await queue.get(run.id);
    expect(row).toMatchObject({ status: 'running', worker: 'another', currentTask: 'not-this-attempt' });
    expect(row?.tokens.total).toBeGreaterThan(0);
  });
});
