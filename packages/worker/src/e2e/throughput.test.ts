import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  describeWithPostgres,
  dropLocation,
  serverPassword,
  temporaryLocation,
  testServerUrl,
  withServer,
} from '@crewline/test-support/postgres';
import { afterAll, expect, it } from 'vitest';
import { RunQueue } from '../run-queue.js';
import { startWorkerChild, type WorkerChild } from '../test-support/children.js';

/**
 * Two measurements of worker processes, written to bench/results/workers.md (the docs copy their
 * tables from there): runs per minute with 1, 2 and 4 worker processes (concurrency 2 each) on the
 * four-task crew, model latency 200 ms, every event checkpointed; and, for three lease lengths, how
 * long a SIGKILLed worker's run takes to continue in another worker. Measurements, not checks of
 * speed: run them with `pnpm --filter @crewline/worker bench:throughput` (skipped otherwise).
 */
const enabled = process.env.CREWLINE_WORKER_THROUGHPUT === '1';
const runCount = 24;
const latencyMs = 200;
const leases = [1000, 3000, 6000];
const recoveryTrials = 3;
const resultsFile = fileURLToPath(new URL('../../../../bench/results/workers.md', import.meta.url));

interface Throughput {
  workers: number;
  elapsedMs: number;
}
interface Recovery {
  leaseTtlMs: number;
  /** SIGKILL → the run claimed by the other worker, per trial. */
  claimedMs: number[];
  /** SIGKILL → the other worker's first model call of the run, per trial. */
  continuedMs: number[];
}
const throughput: Throughput[] = [];
const recovery: Recovery[] = [];
const loadAtStart = loadavg()[0]!;

async function withQueue<T>(
  run: (context: { queue: RunQueue; start: (options: object) => WorkerChild }) => Promise<T>,
): Promise<T> {
  const location = temporaryLocation();
  const directory = mkdtempSync(join(tmpdir(), 'crewline-worker-throughput-'));
  const queue = new RunQueue({ location });
  const children: WorkerChild[] = [];
  const url = new URL(location);
  url.password = '';
  const start = (options: object) => {
    const child = startWorkerChild(
      { location: url.href, callLog: join(directory, 'calls.log'), ...options },
      { PGPASSWORD: serverPassword(testServerUrl()!) },
    );
    children.push(child);
    return child;
  };
  try {
    return await run({ queue, start });
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
}

/** Resolves with the time a line matching `pattern` is printed by `child` (lines seen from now on). */
function nextLine(child: WorkerChild, pattern: RegExp): Promise<number> {
  const seen = child.lines.length;
  return new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      if (child.lines.slice(seen).some((line) => pattern.test(line))) {
        clearInterval(poll);
        resolve(Date.now());
      }
    }, 5);
    void child.exit.then(() => {
      clearInterval(poll);
      reject(new Error(`worker ${child.pid} exited before ${pattern}`));
    });
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const seconds = (milliseconds: number) => `${(milliseconds / 1000).toFixed(1)} s`;

describeWithPostgres('throughput', () => {
  it.skipIf(!enabled).each([1, 2, 4])('%i worker process(es)', { timeout: 300_000 }, async (workers) => {
    await withQueue(async ({ queue, start }) => {
      const ids = [];
      for (let index = 0; index < runCount; index += 1) {
        ids.push((await queue.enqueue('report', { inputs: { topic: `topic ${index}` } })).run.id);
      }
      const children = Array.from({ length: workers }, () =>
        start({ concurrency: 2, leaseTtlMs: 20_000, latencyMs }),
      );
      await Promise.all(children.map((child) => child.waitFor(/^ready$/)));
      const started = Date.now();
      const ended = await queue.waitForEnd(ids, { intervalMs: 50, timeoutMs: 280_000 });
      const elapsedMs = Date.now() - started;
      expect(ended.every((run) => run.status === 'completed')).toBe(true);
      throughput.push({ workers, elapsedMs });
      process.stdout.write(
        `[worker throughput] ${workers} worker(s) × 2: ${runCount} runs in ${elapsedMs} ms = ${((runCount / elapsedMs) * 60_000).toFixed(1)} runs/min\n`,
      );
    });
  });

  it.skipIf(!enabled).each(leases)(
    'a SIGKILLed worker’s run continues elsewhere, lease %i ms',
    { timeout: 300_000 },
    async (leaseTtlMs) => {
      const result: Recovery = { leaseTtlMs, claimedMs: [], continuedMs: [] };
      for (let trial = 0; trial < recoveryTrials; trial += 1) {
        await withQueue(async ({ queue, start }) => {
          const options = { concurrency: 1, leaseTtlMs, latencyMs: 500 };
          const victim = start(options);
          await victim.waitFor(/^ready$/);
          const { run } = await queue.enqueue('report', { inputs: { topic: `trial ${trial}` } });
          await victim.waitFor(new RegExp(`^hold .*"runId":"${run.id}".*"claimed"`));
          // The survivor is idle and ready before the victim dies, as a second machine would be.
          const survivor = start(options);
          await survivor.waitFor(/^ready$/);
          await victim.waitFor(new RegExp(`^call ${run.id} 1$`));
          const claimed = nextLine(survivor, new RegExp(`^hold .*"runId":"${run.id}".*"claimed"`));
          const continued = nextLine(survivor, new RegExp(`^call ${run.id} `));
          victim.process.kill('SIGKILL');
          const killedAt = Date.now();
          result.claimedMs.push((await claimed) - killedAt);
          result.continuedMs.push((await continued) - killedAt);
          const [ended] = await queue.waitForEnd([run.id], { intervalMs: 50, timeoutMs: 120_000 });
          expect(ended?.status).toBe('completed');
        });
      }
      recovery.push(result);
      process.stdout.write(
        `[worker recovery] lease ${leaseTtlMs} ms: taken after ${result.claimedMs.join(', ')} ms, next call after ${result.continuedMs.join(', ')} ms\n`,
      );
    },
  );

  afterAll(() => {
    if (throughput.length !== 3 || recovery.length !== leases.length) return;
    const ideal = (workers: number) => Math.round((60 / ((latencyMs * 4) / 1000)) * workers * 2);
    const lines = [
      '# Worker benchmark (`pnpm --filter @crewline/worker bench:throughput`)',
      '',
      `Run ${new Date().toISOString()} on ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}, ${process.platform}; load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end. Postgres on the same machine (provider-postgres's test server).`,
      '',
      `Throughput: ${runCount} queued runs of the four-task report crew, model latency ${latencyMs} ms a call (${(latencyMs * 4) / 1000} s of model time a run), every event checkpointed, worker processes of concurrency 2 each, timed from the workers being ready to the last run completed.`,
      '',
      '| workers × concurrency | runs | time | runs/min | ideal (model time only) |',
      '| --- | --- | --- | --- | --- |',
      ...throughput
        .sort((a, b) => a.workers - b.workers)
        .map(
          ({ workers, elapsedMs }) =>
            `| ${workers} × 2 | ${runCount} | ${seconds(elapsedMs)} | ${Math.round((runCount / elapsedMs) * 60_000)} | ${ideal(workers)} |`,
        ),
      '',
      '### A killed worker’s run continuing elsewhere',
      '',
      `Two worker processes of concurrency 1 with the same \`leaseTtlMs\`, model latency 500 ms; the one holding a run is SIGKILLed as its second model call starts; the other is idle. Timed from the SIGKILL to the run being claimed by the survivor, and to the survivor's first model call of the run (the interrupted task, continued from the latest checkpoint). ${recoveryTrials} trials per lease; median (min–max). The hold runs out after \`leaseTtlMs\`, a reaper looks every \`leaseTtlMs / 2\`, the retry waits a back-off (here 500 ms ±20 %), then the next poll (200 ms) takes it.`,
      '',
      '| leaseTtlMs | taken by another worker after | its next model call after | trials |',
      '| --- | --- | --- | --- |',
      ...recovery
        .sort((a, b) => a.leaseTtlMs - b.leaseTtlMs)
        .map(
          ({ leaseTtlMs, claimedMs, continuedMs }) =>
            `| ${leaseTtlMs} ms | ${seconds(median(claimedMs))} (${seconds(Math.min(...claimedMs))}–${seconds(Math.max(...claimedMs))}) | ${seconds(median(continuedMs))} (${seconds(Math.min(...continuedMs))}–${seconds(Math.max(...continuedMs))}) | ${claimedMs.length} |`,
        ),
      '',
    ];
    writeFileSync(resultsFile, lines.join('\n'));
    process.stdout.write(`[worker bench] wrote ${resultsFile}\n`);
  });
});
