import { CrewlineError } from '@crewline/events';
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

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function refusal(attempt: Promise<unknown>): Promise<CrewlineError> {
  const error = await attempt.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(CrewlineError.isInstance(error), `refused with a CrewlineError, got ${String(error)}`).toBe(true);
  return error as CrewlineError;
}

describeWithPostgres('idempotency keys shared by enqueue and fork', () => {
  it('are a typed conflict saying whose key it is, never another kind of run returned', async () => {
    const location = temporaryLocation();
    const schema = new URL(location).searchParams.get('schema');
    const queue = new RunQueue({ location, create: true });
    const worker = new Worker({
      location,
      runs: { crews: { report: reportCrewFactory() } },
      pollIntervalMs: 100,
    });
    cleanups.push(async () => {
      await worker.stop({ handBack: false });
      await queue.close();
      await dropLocation(location);
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    });
    await worker.start();
    const first = await queue.enqueue('report', { inputs: { topic: 'tides' }, idempotencyKey: 'K' });
    const other = await queue.enqueue('report', { inputs: { topic: 'kelp' }, idempotencyKey: 'K2' });
    await queue.waitForEnd([first.run.id, other.run.id], { timeoutMs: 30_000 });
    const fork = await queue.fork(first.run.id, { taskOutputs: { 1: 'edited' }, idempotencyKey: 'F' });
    expect(await queue.fork(first.run.id, { idempotencyKey: 'F' })).toMatchObject({ id: fork.id });
    expect(await queue.enqueue('report', { idempotencyKey: 'K' })).toMatchObject({
      created: false,
      run: { id: first.run.id },
    });

    // Before: the fork returned (created false, forkOf set, the topic asked for ignored).
    const enqueuedWithForkKey = await refusal(
      queue.enqueue('report', { inputs: { topic: 'other' }, idempotencyKey: 'F' }),
    );
    expect(enqueuedWithForkKey.code).toBe('conflict');
    expect(enqueuedWithForkKey.message).toContain(
      `"F" was used for run ${fork.id}, a fork of run ${first.run.id}`,
    );

    // Before: "used for run X, which is not a fork of X".
    const forkedWithOwnKey = await refusal(queue.fork(first.run.id, { idempotencyKey: 'K' }));
    expect(forkedWithOwnKey.code).toBe('conflict');
    expect(forkedWithOwnKey.message).toContain(`"K" is the key run ${first.run.id} itself was enqueued with`);

    const forkedWithOtherKey = await refusal(queue.fork(first.run.id, { idempotencyKey: 'K2' }));
    expect(forkedWithOtherKey.message).toContain(
      `"K2" was used to enqueue run ${other.run.id} ("report"), not for a fork`,
    );
  });
});
