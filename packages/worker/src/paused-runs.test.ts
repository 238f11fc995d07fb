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
import type { RunRecord, RunStatus } from './run-record.js';
import { Worker } from './worker.js';
import type { HoldChange } from './worker-options.js';

/** Which methods ran, in order, across attempts and workers. */
const ran: string[] = [];

/** Drafts, asks a person to approve, then publishes with the answer. */
class ApprovalFlow extends Flow<{ topic: string; verdict: string }> {
  initialState = { topic: '', verdict: '' };

  @start()
  draft() {
    ran.push('draft');
    return `a draft on ${this.state.topic}`;
  }

  @listen('draft')
  async review(draft: string) {
    ran.push('review');
    this.state.verdict = await this.ask(`Publish ${draft}?`, { kind: 'input' });
    return `${draft}: ${this.state.verdict}`;
  }
}

/** Says what it was given, at once: shows that a paused run holds no worker slot. */
class EchoFlow extends Flow<{ word: string }> {
  initialState = { word: '' };

  @start()
  echo() {
    return `echo ${this.state.word}`;
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  ran.length = 0;
});

async function setUp(location = temporaryLocation()) {
  const queue = new RunQueue({ location, create: true });
  // Another client, as on another machine, answers.
  const elsewhere = new RunQueue({ location, create: true });
  const released: HoldChange[] = [];
  const worker = new Worker({
    location,
    runs: { flows: { approval: ApprovalFlow, echo: EchoFlow } },
    concurrency: 1,
    leaseTtlMs: 1500,
    pollIntervalMs: 100,
    onHold: (change) => {
      if (change.change === 'released') released.push(change);
    },
  });
  const schema = new URL(location).searchParams.get('schema');
  cleanups.push(async () => {
    await worker.stop({ handBack: false });
    await queue.close();
    await elsewhere.close();
    await dropLocation(location);
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
  });
  return { queue, elsewhere, worker, released };
}

async function untilStatus(queue: RunQueue, runId: string, status: RunStatus): Promise<RunRecord> {
  for (let waited = 0; ; waited += 50) {
    const run = await queue.require(runId);
    if (run.status === status) return run;
    if (waited > 30_000) throw new Error(`run ${runId} is still ${run.status}, not ${status}`);
    await sleep(50);
  }
}

/** The runs table as the first layout made it (before `paused`, the question and the answer). */
function firstLayout(schema: string): string {
  return `CREATE SCHEMA "${schema}";
    CREATE TABLE "${schema}".worker_runs (
      id text PRIMARY KEY, name text NOT NULL, inputs jsonb NOT NULL, idempotency_key text UNIQUE,
      priority integer NOT NULL DEFAULT 0, timeout_ms integer, max_attempts integer NOT NULL,
      status text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
      attempts integer NOT NULL DEFAULT 0, failures integer NOT NULL DEFAULT 0, worker text,
      holder_token text, lease_expires_at timestamptz, job_id text, lineage_id text,
      last_checkpoint text, current_task text, input_tokens bigint NOT NULL DEFAULT 0,
      output_tokens bigint NOT NULL DEFAULT 0, output text, error text, error_code text,
      layout_version integer NOT NULL DEFAULT 1, created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz, finished_at timestamptz, updated_at timestamptz NOT NULL DEFAULT now()
    );`;
}

describeWithPostgres('a flow paused for a person in a worker', () => {
  it('is paused with its question, holds no worker, and continues from its checkpoint with the answer given from another client', async () => {
    const { queue, elsewhere, worker, released } = await setUp();
    const { run } = await queue.enqueue('approval', { inputs: { topic: 'kelp' } });
    await worker.start();
    const paused = await untilStatus(queue, run.id, 'paused');
    expect(paused).toMatchObject({
      worker: null,
      leaseExpiresAt: null,
      attempts: 1,
      failures: 0,
      humanInput: null,
      question: { methodName: 'review', message: 'Publish a draft on kelp?', kind: 'input' },
    });
    expect(paused.lastCheckpoint).not.toBeNull();
    expect(released.map((change) => change.outcome)).toEqual(['paused']);
    expect(worker.activeRunIds).toEqual([]);

    // The worker's one slot is free: another run goes through while the first waits.
    const { run: echo } = await queue.enqueue('echo', { inputs: { word: 'tide' } });
    const [echoed] = await queue.waitForEnd([echo.id], { timeoutMs: 30_000 });
    expect(echoed).toMatchObject({ status: 'completed', output: 'echo tide' });
    expect((await queue.require(run.id)).status).toBe('paused');

    const resumed = await elsewhere.resume(run.id, { humanInput: 'yes, publish' });
    expect(resumed).toMatchObject({ status: 'queued', humanInput: 'yes, publish' });
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({
      status: 'completed',
      attempts: 2,
      failures: 0,
      output: 'a draft on kelp: yes, publish',
      question: { methodName: 'review' },
      humanInput: 'yes, publish',
    });
    // `draft` completed before the pause and was not run again; `review` ran again with the answer.
    expect(ran).toEqual(['draft', 'review', 'review']);
  });

  it('refuses an answer for a run that waits for none, and cancels a paused run', async () => {
    const { queue, worker } = await setUp();
    const { run: queued } = await queue.enqueue('echo', { inputs: { word: 'tide' } });
    await expect(queue.resume(queued.id, { humanInput: 'yes' })).rejects.toMatchObject({
      code: 'invalid_state',
      message: expect.stringContaining('is queued, not paused'),
    });
    await expect(queue.resume('no-such-run', { humanInput: 'yes' })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(queue.resume(queued.id, { humanInput: 42 as unknown as string })).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('humanInput'),
    });

    const { run } = await queue.enqueue('approval', { inputs: { topic: 'reefs' } });
    await worker.start();
    await untilStatus(queue, run.id, 'paused');
    expect((await queue.cancel(run.id)).status).toBe('cancelled');
    await expect(queue.resume(run.id, { humanInput: 'yes' })).rejects.toMatchObject({
      code: 'invalid_state',
    });
    expect(await queue.list({ status: 'paused' })).toEqual([]);
  });

  it('pauses in a runs table made by the first layout, which the first client to start upgrades', async () => {
    const location = temporaryLocation();
    const schema = new URL(location).searchParams.get('schema')!;
    await withServer((client) => client.query(firstLayout(schema)));
    const { queue, worker } = await setUp(location);
    const { run } = await queue.enqueue('approval', { inputs: { topic: 'dunes' } });
    await worker.start();
    const paused = await untilStatus(queue, run.id, 'paused');
    expect(paused.question?.message).toBe('Publish a draft on dunes?');
  });
});
