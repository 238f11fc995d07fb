import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { PostgresProvider } from '@crewline/provider-postgres';
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
import type { RunRecord } from '../run-record.js';
import { startWorkerChild, type WorkerChild } from '../test-support/children.js';
import type { HoldChange } from '../worker-options.js';

/**
 * Three measurements of worker processes, written to bench/results/workers.md (the docs copy their
 * tables from there): runs per minute with 1, 2 and 4 worker processes (concurrency 2 each) on the
 * four-task crew, model latency 200 ms, every event checkpointed; for three lease lengths, how long
 * a SIGKILLed worker's run takes to continue in another worker; and the queue's overhead per run
 * with the throughput's workers (enqueue → first model call, claim → first model call, last
 * checkpoint → completed). Measurements, not checks of speed: run them with
 * `pnpm --filter @crewline/worker bench:throughput` (skipped otherwise).
 *
 * Every time of the overhead is the machine's wall clock read by `Date.now()`, in this process (when
 * `queue.enqueue` returned) or in the worker processes (a model call's start, a hold's `at`, a
 * checkpoint's `createdAt`): one clock, never the database's `now()`.
 */
const enabled = process.env.CREWLINE_WORKER_THROUGHPUT === '1';
const runCount = 24;
const latencyMs = 200;
const leases = [1000, 3000, 6000];
const recoveryTrials = 3;
/** Runs enqueued one at a time, each after the previous ended, so an idle worker takes each. */
const idleRunCount = 8;
/** The worker child's `pollIntervalMs` (test-support/worker-child.ts). */
const pollIntervalMs = 200;
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
/** Per run, in ms; see the table's text in afterAll. */
interface Overhead {
  workers: number;
  /** Runs enqueued one at a time into idle workers: enqueue returned → first model call. */
  idleStartMs: number[];
  /** The batch (enqueued before the workers started): enqueue returned → first model call. */
  batchStartMs: number[];
  /** Every run: hold claimed → first model call. */
  claimToCallMs: number[];
  /** Every run: its last checkpoint's `createdAt` → the completion written (hold released). */
  finishMs: number[];
}
const throughput: Throughput[] = [];
const overheads: Overhead[] = [];
const recovery: Recovery[] = [];
const loadAtStart = loadavg()[0]!;

async function withQueue<T>(
  run: (context: {
    queue: RunQueue;
    location: string;
    start: (options: object) => WorkerChild;
  }) => Promise<T>,
): Promise<T> {
  const location = temporaryLocation();
  const directory = mkdtempSync(join(tmpdir(), 'crewline-worker-throughput-'));
  const queue = new RunQueue({ location, create: true });
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
    return await run({ queue, location, start });
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
/** Nearest-rank percentile. */
const percentile = (values: number[], fraction: number) =>
  [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(values.length * fraction) - 1)]!;
const spread = (values: number[], unit: (milliseconds: number) => string) =>
  `${unit(median(values))} / ${unit(percentile(values, 0.95))} / ${unit(Math.max(...values))}`;
const milliseconds = (value: number) => `${Math.round(value)} ms`;

/**
 * Per run, from the lines of the worker processes: the first model call's time, the claim's `at`
 * (the first one: every run here has one attempt) and the `at` of the hold given up as completed.
 */
function timesOf(children: WorkerChild[]) {
  const firstCall = new Map<string, number>();
  const claimed = new Map<string, number>();
  const completed = new Map<string, number>();
  for (const line of children.flatMap((child) => child.lines)) {
    const call = /^call (\S+) \d+ (\d+)$/.exec(line);
    if (call) {
      const [, runId = '', at = ''] = call;
      firstCall.set(runId, Math.min(firstCall.get(runId) ?? Number.POSITIVE_INFINITY, Number(at)));
    } else if (line.startsWith('hold ')) {
      const change = JSON.parse(line.slice('hold '.length)) as HoldChange;
      if (change.change === 'claimed' && !claimed.has(change.runId)) claimed.set(change.runId, change.at);
      if (change.change === 'released' && change.outcome === 'completed')
        completed.set(change.runId, change.at);
    }
  }
  return { firstCall, claimed, completed };
}

/** The `createdAt` of the newest checkpoint of `run`'s lineage, as a time in ms. */
async function lastCheckpointAt(provider: PostgresProvider, location: string, run: RunRecord) {
  const [last] = await provider.list(location, { lineageId: run.lineageId ?? '', limit: 1 });
  if (last === undefined) throw new Error(`run ${run.id} has no checkpoint`);
  return Date.parse(last.createdAt);
}
const seconds = (milliseconds: number) => `${(milliseconds / 1000).toFixed(1)} s`;

describeWithPostgres('throughput', () => {
  it.skipIf(!enabled).each([1, 2, 4])('%i worker process(es)', { timeout: 300_000 }, async (workers) => {
    await withQueue(async ({ queue, location, start }) => {
      const ids = [];
      const enqueuedAt = new Map<string, number>();
      for (let index = 0; index < runCount; index += 1) {
        const { run } = await queue.enqueue('report', { inputs: { topic: `topic ${index}` } });
        enqueuedAt.set(run.id, Date.now());
        ids.push(run.id);
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
      // Then runs one at a time into the same workers, now idle: enqueue → first call is the
      // queue's own overhead, not a wait for a free slot.
      const idleIds: string[] = [];
      for (let index = 0; index < idleRunCount; index += 1) {
        // A slot that just finished a run polls again 200 ms later: a random pause puts the enqueue
        // at a random point of the slots' poll cycles, not always just after the last run ended.
        await sleep(Math.random() * 2 * pollIntervalMs);
        const { run } = await queue.enqueue('report', { inputs: { topic: `idle ${index}` } });
        enqueuedAt.set(run.id, Date.now());
        idleIds.push(run.id);
        const [idleEnded] = await queue.waitForEnd([run.id], { intervalMs: 50, timeoutMs: 60_000 });
        expect(idleEnded?.status).toBe('completed');
        ended.push(idleEnded!);
      }
      const { firstCall, claimed, completed } = timesOf(children);
      const provider = new PostgresProvider();
      try {
        const at = (times: Map<string, number>, runId: string) => {
          const time = times.get(runId);
          if (time === undefined) throw new Error(`no time of run ${runId} in the workers' lines`);
          return time;
        };
        const overhead: Overhead = {
          workers,
          idleStartMs: idleIds.map((id) => at(firstCall, id) - at(enqueuedAt, id)),
          batchStartMs: ids.map((id) => at(firstCall, id) - at(enqueuedAt, id)),
          claimToCallMs: ended.map((run) => at(firstCall, run.id) - at(claimed, run.id)),
          finishMs: await Promise.all(
            ended.map(
              async (run) => at(completed, run.id) - (await lastCheckpointAt(provider, location, run)),
            ),
          ),
        };
        overheads.push(overhead);
        process.stdout.write(
          `[worker overhead] ${workers} worker(s) × 2: idle enqueue → first call ${spread(overhead.idleStartMs, milliseconds)}; claim → first call ${spread(overhead.claimToCallMs, milliseconds)}; last checkpoint → completed ${spread(overhead.finishMs, milliseconds)} (median / p95 / max)\n`,
        );
      } finally {
        await provider.close();
      }
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
          await victim.waitFor(new RegExp(`^call ${run.id} 1 `));
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
    if (throughput.length !== 3 || overheads.length !== 3 || recovery.length !== leases.length) return;
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
      '### Queue overhead per run',
      '',
      `The same workers and crew. Per run, median / p95 / max (nearest rank) of three spans. *Enqueue → first model call, idle workers*: ${idleRunCount} runs enqueued one at a time after the batch, each once the previous one ended and a random pause of 0–${2 * pollIntervalMs} ms (so the enqueue falls at a random point of the slots' poll cycles), from the moment \`queue.enqueue\` returned to the start of the run's first model call; it holds the wait for the next poll of an idle slot (each idle slot polls pg-boss every ${pollIntervalMs} ms here, 500 ms by default, so more slots find a run sooner), the pg-boss fetch, the claim (the row set running with a holder token and a lease), the crew built by its factory, the lineage looked up, and kickoff up to the first call with the checkpoints written before it (the lineage head claimed, every event checkpointed). *Claim → first model call*: the same without the wait and the fetch, for every run (the batch of ${runCount} and the ${idleRunCount}). *Last checkpoint → completed*: from the \`createdAt\` of the run's newest checkpoint (stamped when the runtime builds it, before it is written) to the completion written (the \`UPDATE\` that sets the run completed with its output, tokens and \`finished_at\` and gives up the hold has returned): the last checkpoint's own write, the end of kickoff, the lineage recording settled and the completion write; not the pg-boss job's completion after it. The last column is the batch's enqueue → first model call, queued before the workers started: mostly waiting for a free slot, shown for contrast. One clock for all: the machine's wall clock (\`Date.now()\`) read in the bench process (enqueue) and in the worker processes (model call, claim, checkpoint, completion), never the database's \`now()\`.`,
      '',
      '| workers × concurrency | runs | enqueue → first model call, idle workers | claim → first model call | last checkpoint → completed | batch: enqueue → first model call |',
      '| --- | --- | --- | --- | --- | --- |',
      ...overheads
        .sort((a, b) => a.workers - b.workers)
        .map(
          ({ workers, idleStartMs, batchStartMs, claimToCallMs, finishMs }) =>
            `| ${workers} × 2 | ${idleStartMs.length} + ${batchStartMs.length} | ${spread(idleStartMs, milliseconds)} | ${spread(claimToCallMs, milliseconds)} | ${spread(finishMs, milliseconds)} | ${spread(batchStartMs, seconds)} |`,
        ),
      '',
    ];
    writeFileSync(resultsFile, lines.join('\n'));
    process.stdout.write(`[worker bench] wrote ${resultsFile}\n`);
  });
});
