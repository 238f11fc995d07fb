import { Flow, listen, persist, start } from '@crewline/runtime';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import { Worker } from './worker.js';

// A flow's kickoff inputs are merged into its state. The first attempt of a fork is given only the
// inputs the fork changed (and the credentials its restored state holds as [REDACTED]), never the
// state id: the forked run's other inputs given again would undo what its completed methods made of
// them, and its `id` would name a state the fork (under a new state id) cannot continue as.

const secret = 'sk-live-0123456789abcdefghij';
/** What `publish` read, over every run: the count, the topic, whether it had the key, the state id. */
const read: { count: number; topic: string; key?: string; stateId?: string }[] = [];
/** How many more times `publish` throws. */
let publishFailures = 0;

function publishOrFail(): void {
  if (publishFailures > 0) {
    publishFailures -= 1;
    throw new Error('the press is down, on purpose');
  }
}

/** Counts from its input: `bump` (completed before the fork point) raises it by 10. */
class Counted extends Flow<{ count: number; topic: string }> {
  initialState = { count: 0, topic: '' };
  @start() bump() {
    this.state.count += 10;
    return 'bumped';
  }
  @listen('bump') publish() {
    read.push({ count: this.state.count, topic: this.state.topic });
    publishOrFail();
    return `${this.state.count} on ${this.state.topic}`;
  }
}

/** The same, its state persisted under the id its run is enqueued with. */
@persist()
class Persisted extends Flow<{ id: string; count: number; topic: string }> {
  initialState = { id: '', count: 0, topic: '' };
  @start() bump() {
    this.state.count += 10;
    return 'bumped';
  }
  @listen('bump') publish() {
    read.push({ count: this.state.count, topic: this.state.topic, stateId: this.state.id });
    publishOrFail();
    return `${this.state.count} on ${this.state.topic}`;
  }
}

/** The same, with a credential its checkpoints store as [REDACTED]. */
class Keyed extends Flow<{ apiKey: string; count: number; topic: string }> {
  initialState = { apiKey: '', count: 0, topic: '' };
  @start() bump() {
    this.state.count += 10;
    return 'bumped';
  }
  @listen('bump') publish() {
    const key = this.state.apiKey === secret ? 'the key' : this.state.apiKey;
    read.push({ count: this.state.count, topic: this.state.topic, key });
    publishOrFail();
    return `${this.state.count} on ${this.state.topic}`;
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  read.length = 0;
  publishFailures = 0;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startedWorker(): Promise<RunQueue> {
  const location = temporaryLocation();
  const queue = new RunQueue({ location, create: true });
  const worker = new Worker({
    location,
    runs: { flows: { counted: Counted, persisted: Persisted, keyed: Keyed } },
    pollIntervalMs: 100,
  });
  cleanups.push(async () => {
    await worker.stop({ handBack: false });
    await queue.close();
    await dropLocation(location);
    const schema = new URL(location).searchParams.get('schema');
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
  });
  await worker.start();
  return queue;
}

/** Enqueues a run whose `publish` fails once, and waits for it to fail there. */
async function failedRun(queue: RunQueue, name: string, inputs: Record<string, unknown>): Promise<string> {
  publishFailures = 1;
  const { run } = await queue.enqueue(name, { inputs, maxAttempts: 1 });
  const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
  expect(ended).toMatchObject({ status: 'failed', error: expect.stringContaining('the press is down') });
  return run.id;
}

describeWithPostgres('the first attempt of a flow run forked with changed inputs', () => {
  it('keeps what the completed methods made of the other inputs, in a fork of a fork too', async () => {
    const queue = await startedWorker();
    const runId = await failedRun(queue, 'counted', { count: 1, topic: 'kelp' });

    publishFailures = 1;
    const fork = await queue.fork(runId, { inputs: { topic: 'reefs' } });
    expect(fork.inputs).toEqual({ count: 1, topic: 'reefs' });
    const [forkEnd] = await queue.waitForEnd([fork.id], { timeoutMs: 30_000 });
    expect(forkEnd).toMatchObject({ status: 'failed' });

    // The fork's checkpoints hold every input (the forked run's and the changed one): its own fork
    // changing another one keeps the count too.
    const again = await queue.fork(fork.id, { inputs: { topic: 'coral' } });
    const [againEnd] = await queue.waitForEnd([again.id], { timeoutMs: 30_000 });
    expect(againEnd, againEnd?.error ?? '').toMatchObject({ status: 'completed', output: '11 on coral' });
    expect(read).toEqual([
      { count: 11, topic: 'kelp' },
      { count: 11, topic: 'reefs' },
      { count: 11, topic: 'coral' },
    ]);
  });

  it('runs a persisted flow kicked off by its id under the fork’s new state id', async () => {
    const queue = await startedWorker();
    const runId = await failedRun(queue, 'persisted', { id: 'first-run', count: 1, topic: 'kelp' });

    const fork = await queue.fork(runId, { inputs: { topic: 'reefs' } });
    const [ended] = await queue.waitForEnd([fork.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed', output: '11 on reefs' });
    expect(read).toHaveLength(2);
    expect(read[0]).toEqual({ count: 11, topic: 'kelp', stateId: 'first-run' });
    expect(read[1]).toMatchObject({ count: 11, topic: 'reefs' });
    expect(read[1]!.stateId).not.toBe('first-run');
  });

  it('refuses, without retrying, a fork of a persisted flow that changes its state id', async () => {
    const queue = await startedWorker();
    const runId = await failedRun(queue, 'persisted', { id: 'first-run', count: 1, topic: 'kelp' });

    const fork = await queue.fork(runId, { inputs: { id: 'second-run' }, maxAttempts: 3 });
    const [ended] = await queue.waitForEnd([fork.id], { timeoutMs: 30_000 });
    expect(ended).toMatchObject({ status: 'failed', attempts: 1, errorCode: 'invalid_argument' });
    expect(ended!.error).toContain(
      `a fork of a flow's run runs under a new state id, so its input "id" cannot change ("first-run" to "second-run")`,
    );
    expect(read).toHaveLength(1);
  });

  it('gives back the credential the restored state holds as [REDACTED]', async () => {
    const queue = await startedWorker();
    const runId = await failedRun(queue, 'keyed', { apiKey: secret, count: 1, topic: 'kelp' });

    const fork = await queue.fork(runId, { inputs: { topic: 'reefs' } });
    const [ended] = await queue.waitForEnd([fork.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed', output: '11 on reefs' });
    expect(read).toEqual([
      { count: 11, topic: 'kelp', key: 'the key' },
      { count: 11, topic: 'reefs', key: 'the key' },
    ]);
  });
});
