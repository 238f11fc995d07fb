import { setTimeout as sleep } from 'node:timers/promises';
import { PostgresProvider } from '@crewline/provider-postgres';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it, vi } from 'vitest';
import { QueueStore } from './queue-store.js';
import { RunQueue } from './run-queue.js';
import { reportCrewFactory, taskDescriptions } from './test-support/report-crew.js';
import { Worker } from './worker.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describeWithPostgres('queue.progress', () => {
  it('refuses a negative model price, naming the model id', () => {
    expect(
      () =>
        new RunQueue({
          location: temporaryLocation(),
          modelPrices: { 'openai:gpt-4o': { inputPerMillion: 2.5, outputPerMillion: -10 } },
        }),
    ).toThrow(
      /RunQueue option modelPrices is not valid \(openai:gpt-4o\.outputPerMillion: must not be negative\)/,
    );
  });

  it('reads a run’s progress from its checkpoints, before any renewal wrote it to the row', async () => {
    const location = temporaryLocation();
    const queue = new RunQueue({ location, create: true });
    const calls: number[] = [];
    // A lease of a minute: no renewal (the row's only progress update) happens during this run.
    const worker = new Worker({
      location,
      runs: {
        crews: { report: reportCrewFactory({ latencyMs: 300, onCall: (_run, task) => calls.push(task) }) },
      },
      leaseTtlMs: 60_000,
      pollIntervalMs: 100,
    });
    cleanups.push(async () => {
      await worker.stop({ handBack: false });
      await queue.close();
      await dropLocation(location);
      const schema = new URL(location).searchParams.get('schema');
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    });
    const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' } });
    expect(await queue.progress(run.id)).toMatchObject({ status: 'queued', checkpoints: 0, modelCalls: 0 });
    await worker.start();
    // The third call has started: the first two completions are checkpointed.
    for (let waited = 0; !calls.includes(2); waited += 20) {
      if (waited > 30_000) throw new Error('the run never reached its third task');
      await sleep(20);
    }
    const during = await queue.progress(run.id);
    expect(during.status).toBe('running');
    // The second completion's checkpoint may still be on its way (Postgres writes in the background).
    expect(during.modelCalls).toBeGreaterThanOrEqual(1);
    expect(during.modelCalls).toBeLessThanOrEqual(2);
    expect(during.tokens.input).toBeGreaterThan(0);
    expect(during.currentTask).toBe('Write the report on tides');
    expect(during.lastCheckpoint).toMatch(/#/);
    // What the row says at that moment: nothing yet.
    expect((await queue.get(run.id))!.tokens.total).toBe(0);

    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    const after = await queue.progress(run.id);
    expect(after).toMatchObject({
      status: 'completed',
      modelCalls: 4,
      currentTask: taskDescriptions[3]!.replace('{topic}', 'tides'),
      lineageId: ended!.lineageId,
    });
    expect(after.tokens).toEqual(ended!.tokens);
    expect(after.checkpoints).toBeGreaterThan(4);
    // The report crew's model is crewline's offline model registered as `report:<run id>`: $0.
    const modelId = `report:${run.id}`;
    expect(after.cost).toMatchObject({ status: 'offline', usd: 0, unpriced: [] });
    expect(after.cost.models[0]).toMatchObject({ model: modelId, calls: 4, usd: 0 });
    expect(after.cost.models[0]!.tokens).toMatchObject({
      input: after.tokens.input,
      output: after.tokens.output,
    });
  });

  it('closes the checkpoint reader of progress even when closing the queue fails', async () => {
    const location = temporaryLocation();
    const queue = new RunQueue({ location, create: true });
    cleanups.push(async () => {
      await dropLocation(location);
      const schema = new URL(location).searchParams.get('schema');
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    });
    const { run } = await queue.enqueue('report');
    await queue.progress(run.id);
    const closeStore = QueueStore.prototype.close;
    const storeClose = vi.spyOn(QueueStore.prototype, 'close');
    const providerClose = vi.spyOn(PostgresProvider.prototype, 'close');
    cleanups.push(async () => {
      storeClose.mockRestore();
      providerClose.mockRestore();
    });
    storeClose.mockImplementationOnce(async function (this: QueueStore) {
      await closeStore.call(this);
      throw new Error('the queue pool failed to close');
    });
    await expect(queue.close()).rejects.toThrow('the queue pool failed to close');
    expect(providerClose).toHaveBeenCalledTimes(1);
  });
});
