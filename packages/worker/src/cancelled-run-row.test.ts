import { setTimeout as sleep } from 'node:timers/promises';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import { reportCrewFactory, taskDescriptions } from './test-support/report-crew.js';
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

describeWithPostgres('the row of a run cancelled while it runs', () => {
  it('names no worker, and holds the tokens, task and checkpoint of what the attempt did up to the cancel', async () => {
    const location = temporaryLocation();
    const queue = new RunQueue({ location, create: true });
    const calls: number[] = [];
    const released: HoldChange[] = [];
    // A lease of a minute renews every 20 s: no renewal writes the run's progress during this test,
    // so what the row shows comes from the end of the attempt (or from nothing).
    const worker = new Worker({
      location,
      runs: {
        crews: { report: reportCrewFactory({ latencyMs: 1000, onCall: (_runId, task) => calls.push(task) }) },
      },
      pollIntervalMs: 100,
      leaseTtlMs: 60_000,
      onHold: (change) => {
        if (change.change === 'released') released.push(change);
      },
    });
    const schema = new URL(location).searchParams.get('schema');
    cleanups.push(async () => {
      await worker.stop({ handBack: false });
      await queue.close();
      await dropLocation(location);
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    });
    const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' } });
    await worker.start();
    await until(() => calls.includes(1), 'the second model call');
    expect((await queue.get(run.id))?.worker).not.toBeNull();
    const cancelled = await queue.cancel(run.id);
    expect(cancelled).toMatchObject({ status: 'cancelled', worker: null });
    await until(() => released.length > 0, 'the hold to be given up');
    const row = await queue.get(run.id);
    // Before: the worker of the attempt, no task and 0 tokens (nothing renewed), while the first
    // task's call had completed and was checkpointed.
    expect(row).toMatchObject({ status: 'cancelled', worker: null });
    expect(row!.tokens.total).toBeGreaterThan(0);
    expect(row!.currentTask).toBe(taskDescriptions[1]!.replace('{topic}', 'tides'));
    expect(row!.lastCheckpoint).not.toBeNull();
    const progress = await queue.progress(run.id);
    expect(row!.tokens.total).toBe(progress.tokens.total);
  });
});
