import {
  describeWithPostgres,
  dropLocation,
  temporaryLocation,
  testServerUrl,
} from '@crewline/test-support/postgres';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import type { QueueStore } from './queue-store.js';
import { RunClaims } from './run-claim.js';
import { migrateRunsTable, runsTable } from './schema.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A runs table of its own, migrated, and a pool on the test server. */
async function setUp() {
  const location = temporaryLocation();
  const schema = new URL(location).searchParams.get('schema')!;
  const pool = new pg.Pool({ connectionString: testServerUrl()!, max: 2 });
  cleanups.push(async () => {
    await pool.end();
    await dropLocation(location);
  });
  await pool.query(`CREATE SCHEMA "${schema}"`);
  await migrateRunsTable(pool, schema);
  return { pool, schema, table: runsTable(schema) };
}

/** The statement `RunClaims.passedOver` sends, with its values, captured instead of sent. */
async function passedOverStatement(table: string, registered: string[]) {
  let sent: { text: string; values: unknown[] } | undefined;
  const store = {
    table,
    pool: {
      query: async (text: string, values: unknown[]) => {
        sent = { text, values };
        return { rows: [] };
      },
    },
  } as unknown as QueueStore;
  const claims = new RunClaims(store, {
    worker: 'worker test',
    registered: () => registered,
    leaseTtlMs: 1000,
  });
  await claims.passedOver('a-token');
  return sent!;
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Actual Rows'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

describeWithPostgres('the claim of a passed-over run by name', () => {
  it('reads only the passed-over rows of the names the worker registers, through the index led by the name', async () => {
    const { pool, table } = await setUp();
    // 20,000 passed-over runs of a name no worker registers (a typo, a removed crew), older and of
    // a higher priority than the three a worker registers: a claim that filters by name reads them
    // all first (before: "Rows Removed by Filter: 20000", at every poll of every slot).
    await pool.query(
      `INSERT INTO ${table} (id, name, inputs, max_attempts, status, priority, created_at, passed_over)
       SELECT 'typo-' || n, 'reprot', '{}', 5, 'queued', 5, now() - interval '1 hour', '{"times": 1}'
         FROM generate_series(1, 20000) AS n`,
    );
    await pool.query(
      `INSERT INTO ${table} (id, name, inputs, max_attempts, status, passed_over)
       SELECT 'slow-' || n, 'slow', '{}', 5, 'queued', '{"times": 1}' FROM generate_series(1, 3) AS n`,
    );
    await pool.query(`ANALYZE ${table}`);
    const statement = await passedOverStatement(table, ['report', 'slow']);
    const client = await pool.connect();
    let plan: PlanNode;
    try {
      // EXPLAIN ANALYZE runs the claim: rolled back, so the row it takes stays queued.
      await client.query('BEGIN');
      const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`,
        statement.values,
      );
      plan = rows[0]!['QUERY PLAN'][0]!.Plan;
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    const nodes = nodesOf(plan);
    const described = JSON.stringify(plan, null, 1);
    const byName = nodes.filter((node) => node['Index Name'] === 'worker_runs_passed_over_by_name');
    expect(byName, described).toHaveLength(1);
    expect(byName[0]!['Index Cond'], described).toContain('name = ANY');
    // The three rows of `slow` at most, none of the 20,000 others.
    expect(byName[0]!['Actual Rows'], described).toBeLessThanOrEqual(3);
    expect(
      nodes.filter((node) => (node['Rows Removed by Filter'] ?? 0) > 0),
      described,
    ).toEqual([]);
  });

  it('a table with the first index of layout 4 (a development database) gets the one led by the name instead', async () => {
    const { pool, schema, table } = await setUp();
    await pool.query(`DROP INDEX "${schema}".worker_runs_passed_over_by_name`);
    await pool.query(
      `CREATE INDEX worker_runs_passed_over ON ${table} (priority DESC, created_at)
        WHERE status = 'queued' AND passed_over IS NOT NULL`,
    );
    await migrateRunsTable(pool, schema);
    const { rows } = await pool.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE 'worker_runs_passed_over%'`,
      [schema],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.indexname).toBe('worker_runs_passed_over_by_name');
    expect(rows[0]!.indexdef).toContain('(name, priority DESC, created_at)');
  });
});
