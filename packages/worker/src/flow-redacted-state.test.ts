import { setTimeout as sleep } from 'node:timers/promises';
import { Flow, listen, start } from '@crewline/runtime';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import type { RunStatus } from './run-record.js';
import { Worker } from './worker.js';

// A flow's checkpoints store its credential-named state fields as [REDACTED], and a continued flow
// refuses to run without them: every attempt that continues a run (a retry, a person's answer) gives
// back the run's inputs the restored state holds so, and only those.

const secret = 'sk-live-0123456789abcdefghij';
/** What the methods after the first one read of the key and the count, across attempts. */
const read: unknown[] = [];
let failOnce = true;

/** Counts from its input, raised by a completed method; its key is read after a retryable failure. */
class Retried extends Flow<{ apiKey: string; count: number }> {
  initialState = { apiKey: '', count: 0 };
  @start() bump() {
    this.state.count += 10;
    return 'bumped';
  }
  @listen('bump') charge() {
    if (failOnce) {
      failOnce = false;
      throw new Error('connection reset, on purpose');
    }
    read.push({ key: this.state.apiKey === secret ? 'the key' : this.state.apiKey, count: this.state.count });
    return `charged ${this.state.count}`;
  }
}

/** The same, but asks a person before it charges. */
class Approved extends Flow<{ apiKey: string; count: number }> {
  initialState = { apiKey: '', count: 0 };
  @start() bump() {
    this.state.count += 10;
    return 'bumped';
  }
  @listen('bump') async charge() {
    const answer = await this.ask('Charge?', { kind: 'input' });
    read.push({ key: this.state.apiKey === secret ? 'the key' : this.state.apiKey, count: this.state.count });
    return `${answer}: charged ${this.state.count}`;
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  read.length = 0;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startedWorker(): Promise<{ queue: RunQueue; worker: Worker }> {
  const location = temporaryLocation();
  const queue = new RunQueue({ location, create: true });
  const worker = new Worker({
    location,
    runs: { flows: { retried: Retried, approved: Approved } },
    leaseTtlMs: 1500,
    pollIntervalMs: 100,
    retryDelayMs: 200,
  });
  cleanups.push(async () => {
    await worker.stop({ handBack: false });
    await queue.close();
    await dropLocation(location);
    const schema = new URL(location).searchParams.get('schema');
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
  });
  await worker.start();
  return { queue, worker };
}

async function untilStatus(queue: RunQueue, runId: string, status: RunStatus): Promise<void> {
  for (let waited = 0; waited < 30_000; waited += 50) {
    if ((await queue.require(runId)).status === status) return;
    await sleep(50);
  }
  throw new Error(`run ${runId} never became ${status}`);
}

describeWithPostgres('a worker continuing a flow whose state holds a credential', () => {
  it('gives the key back to a retry after a failure, and no other input', async () => {
    failOnce = true;
    const { queue } = await startedWorker();
    const { run } = await queue.enqueue('retried', { inputs: { apiKey: secret, count: 1 } });
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed', attempts: 2, failures: 1 });
    expect(ended!.output).toBe('charged 11');
    expect(read).toEqual([{ key: 'the key', count: 11 }]);
  });

  it('gives the key back to the answer of a paused run, and no other input', async () => {
    const { queue } = await startedWorker();
    const { run } = await queue.enqueue('approved', { inputs: { apiKey: secret, count: 1 } });
    await untilStatus(queue, run.id, 'paused');
    await queue.resume(run.id, { humanInput: 'yes' });
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed' });
    expect(ended!.output).toBe('yes: charged 11');
    expect(read).toEqual([{ key: 'the key', count: 11 }]);
  });
});
