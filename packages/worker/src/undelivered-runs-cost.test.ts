import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  withServer,
} from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import { parseQueueLocation } from './connection.js';
import { QueueStore, RUNS_QUEUE } from './queue-store.js';
import { RunQueue } from './run-queue.js';
import { UndeliveredRuns, undeliveredRunsStatement } from './undelivered-runs.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function queueWithRuns(count: number) {
  const location = temporaryLocation();
  const schema = new URL(location).searchParams.get('schema');
  const queue = new RunQueue({ location, create: true });
  const store = new QueueStore(parseQueueLocation(location), {
    poolSize: 1,
    applicationName: 'crewline-test-undelivered-cost',
    maintenance: false,
    create: false,
  });
  cleanups.push(async () => {
    await store.close();
    await queue.close();
    await dropLocation(location);
    await withServer((client) => client.query(`DROP SCHEMA IF EXISTS "${schema}_queue" CASCADE`));
  });
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) {
    ids.push((await queue.enqueue('report', { inputs: { topic: `t${index}` } })).run.id);
  }
  await store.start();
  return { queue, store, ids };
}

/** The plan's nodes, flattened. */
function nodesOf(plan: Record<string, unknown>): Record<string, unknown>[] {
  const children = (plan.Plans as Record<string, unknown>[] | undefined) ?? [];
  return [plan, ...children.flatMap(nodesOf)];
}

describeWithPostgres('the undelivered-runs sweep, beside the jobs pg-boss keeps', () => {
  // Before (5d38363): `job.id::text = runs.job_id` could not use the job table's key, so every sweep
  // (every worker, every leaseTtlMs/2) read every job pg-boss keeps (completed ones stay 12 h).
  it('looks each queued run’s job up by its key instead of reading the job table', async () => {
    const { store } = await queueWithRuns(10);
    const jobs = `"${store.location.queueSchema}".job`;
    await store.pool.query(
      `INSERT INTO ${jobs} (id, name, data, state, started_on, completed_on)
       SELECT gen_random_uuid(), $1, '{}', 'completed', now(), now() FROM generate_series(1, 20000)`,
      [RUNS_QUEUE],
    );
    await store.pool.query(`ANALYZE ${jobs}`);
    await store.pool.query(`ANALYZE ${store.table}`);
    const { rows } = await store.pool.query<{ 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }>(
      `EXPLAIN (FORMAT JSON) ${undeliveredRunsStatement(store.table, store.location.queueSchema)}`,
      [RUNS_QUEUE, 1500],
    );
    const scans = nodesOf(rows[0]!['QUERY PLAN'][0].Plan)
      .filter((node) => node['Node Type'] === 'Seq Scan')
      .map((node) => String(node['Relation Name']));
    expect(scans.filter((relation) => relation !== 'worker_runs')).toEqual([]);
  });

  it('counts a run whose job id is not a uuid as undelivered instead of failing the sweep', async () => {
    const { queue, store, ids } = await queueWithRuns(1);
    await store.pool.query(`UPDATE ${store.table} SET job_id = 'not-a-uuid' WHERE id = $1`, [ids[0]]);
    const sweep = new UndeliveredRuns(store, { claimGraceMs: 1500 });
    expect(await sweep.resend()).toEqual([ids[0]]);
    expect((await queue.get(ids[0]!))?.jobId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await sweep.resend()).toEqual([]);
  });
});
