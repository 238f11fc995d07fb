import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { RunQueue } from '../run-queue.js';
import { startWorkerChild, type WorkerChild } from '../test-support/children.js';
import {
  describeWithPostgres,
  dropLocation,
  serverPassword,
  temporaryLocation,
  testServerUrl,
  withServer,
} from '../test-support/postgres.js';

/**
 * Runs per minute with 1, 2 and 4 worker processes (concurrency 2 each) on the four-task crew, model
 * latency 200 ms, every event checkpointed. A measurement, not a check of speed: run it with
 * `pnpm --filter @crewline/worker bench:throughput` (skipped otherwise).
 */
const enabled = process.env.CREWLINE_WORKER_THROUGHPUT === '1';
const runCount = 24;
const latencyMs = 200;

describeWithPostgres('throughput', () => {
  it.skipIf(!enabled).each([1, 2, 4])('%i worker process(es)', { timeout: 300_000 }, async (workers) => {
    const location = temporaryLocation();
    const directory = mkdtempSync(join(tmpdir(), 'crewline-worker-throughput-'));
    const queue = new RunQueue({ location });
    const children: WorkerChild[] = [];
    const url = new URL(location);
    url.password = '';
    try {
      const ids = [];
      for (let index = 0; index < runCount; index += 1) {
        ids.push((await queue.enqueue('report', { inputs: { topic: `topic ${index}` } })).run.id);
      }
      for (let index = 0; index < workers; index += 1) {
        children.push(
          startWorkerChild(
            {
              location: url.href,
              callLog: join(directory, 'calls.log'),
              concurrency: 2,
              leaseTtlMs: 20_000,
              latencyMs,
            },
            { PGPASSWORD: serverPassword(testServerUrl()!) },
          ),
        );
      }
      await Promise.all(children.map((child) => child.waitFor(/^ready$/)));
      const started = Date.now();
      const ended = await queue.waitForEnd(ids, { intervalMs: 50, timeoutMs: 280_000 });
      const elapsedMs = Date.now() - started;
      expect(ended.every((run) => run.status === 'completed')).toBe(true);
      const perMinute = (runCount / elapsedMs) * 60_000;
      process.stdout.write(
        `[worker throughput] ${workers} worker(s) × 2: ${runCount} runs in ${elapsedMs} ms = ${perMinute.toFixed(1)} runs/min (model ${latencyMs} ms × 4 calls a run)\n`,
      );
    } finally {
      for (const child of children) child.process.kill('SIGTERM');
      await Promise.all(children.map((child) => child.exit));
      await queue.close();
      await dropLocation(location);
      await withServer((client) =>
        client.query(`DROP SCHEMA IF EXISTS "${url.searchParams.get('schema')}_queue" CASCADE`),
      );
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
