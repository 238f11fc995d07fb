import { setTimeout as sleep } from 'node:timers/promises';
import { PostgresProvider } from '@crewline/provider-postgres';
import { Agent, Crew, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';
import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { RunQueue } from './run-queue.js';
import { Worker } from './worker.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describeWithPostgres("a run's lineage on its row", () => {
  it('is recorded before the first checkpoint of the lineage can be written (a worker killed in between leaves none unknown)', async () => {
    const location = temporaryLocation();
    const schema = new URL(location).searchParams.get('schema')!;
    const queue = new RunQueue({ location, create: true });
    const provider = new PostgresProvider({ schema });
    // Another session holds the run's row locked from the moment the attempt builds its crew: the
    // statement that records the lineage waits for it, as a worker killed before that statement
    // would never make it.
    let unlock: () => void = () => undefined;
    let locked: Promise<unknown> = Promise.resolve();
    const lockRow = (runId: string) =>
      new Promise<void>((rowLocked) => {
        locked = withServer(async (client) => {
          await client.query('BEGIN');
          await client.query(`SELECT 1 FROM "${schema}".worker_runs WHERE id = $1 FOR UPDATE`, [runId]);
          rowLocked();
          await new Promise<void>((resolve) => {
            unlock = resolve;
          });
          await client.query('COMMIT');
        });
      });
    const model = offlineModel({ name: 'lineage-recording' });
    const worker = new Worker({
      location,
      provider,
      pollIntervalMs: 100,
      runs: {
        crews: {
          report: async (context) => {
            await lockRow(context.runId);
            const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Plain', llm: model });
            const task = new Task({
              description: 'Write on {topic}',
              expectedOutput: 'A page',
              agent: writer,
            });
            return new Crew({ name: 'report', agents: [writer], tasks: [task] });
          },
        },
      },
    });
    cleanups.push(async () => {
      unlock();
      await locked;
      await worker.stop({ handBack: false });
      await queue.close();
      await provider.close();
      await dropLocation(location);
      await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
    });
    const { run } = await queue.enqueue('report', { inputs: { topic: 'tides' } });
    await worker.start();

    // Whatever the run has written by now, the row names its lineage.
    const checkpointLocation = location;
    for (let waited = 0; waited < 1500; waited += 50) {
      const written = await provider.list(checkpointLocation);
      const row = await queue.require(run.id);
      for (const checkpoint of written) expect(checkpoint.lineageId).toBe(row.lineageId);
      await sleep(50);
    }
    expect(model.calls).toHaveLength(0);

    unlock();
    const [ended] = await queue.waitForEnd([run.id], { timeoutMs: 30_000 });
    expect(ended, ended?.error ?? '').toMatchObject({ status: 'completed', attempts: 1 });
    const written = await provider.list(checkpointLocation);
    expect(written.length).toBeGreaterThan(0);
    expect(new Set(written.map((checkpoint) => checkpoint.lineageId))).toEqual(new Set([ended!.lineageId]));
  });
});
