import { connectionLost, withPooledClient } from '@crewline/provider-postgres/internal';
import type pg from 'pg';

/**
 * The layout of the runs table; bumped with a migration when it changes. 2: the `paused` status and
 * the question, answer and pause checkpoint of a flow paused for a person. 3: `passed_over`, the
 * worker that last handed a queued run back because it registers no crew or flow under its name.
 * 4: the index of queued passed-over runs, led by their name, which the workers that register it
 * take by name (rows unchanged: a worker of layout 3 works on a table of layout 4, and the other way
 * round). 5: `rerun_from`, the method a flow's fork re-runs (a worker of layout 4 would continue
 * that method's half-done crews instead of starting them over). 6: `renewal_holder` and the tokens
 * of that hold the counters include (`renewal_input_tokens`, `renewal_output_tokens`), so a renewal
 * carries the hold's running total and one applied twice, or late, counts nothing twice (a worker of
 * layout 5 adds its deltas as before and leaves them alone).
 */
export const RUNS_LAYOUT_VERSION = 6;

/** `"<schema>".worker_runs`, quoted. */
export function runsTable(schema: string): string {
  return `"${schema}".worker_runs`;
}

/**
 * Creates the schema and the runs table when missing. Under a transaction-level advisory lock keyed
 * by the schema: concurrent first workers create it once (CREATE ... IF NOT EXISTS alone races on
 * the catalog). On a client that is dropped, not crashed on, if its connection dies meanwhile.
 */
export async function migrateRunsTable(pool: pg.Pool, schema: string): Promise<void> {
  const table = runsTable(schema);
  await withPooledClient(pool, async (client) => {
    try {
      await client.query(`
    BEGIN;
    SELECT pg_advisory_xact_lock(hashtext('crewline-worker:' || ${literal(schema)}));
    CREATE SCHEMA IF NOT EXISTS "${schema}";
    CREATE TABLE IF NOT EXISTS ${table} (
      id text PRIMARY KEY,
      name text NOT NULL,
      inputs jsonb NOT NULL,
      idempotency_key text UNIQUE,
      priority integer NOT NULL DEFAULT 0,
      timeout_ms integer,
      max_attempts integer NOT NULL,
      status text NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      failures integer NOT NULL DEFAULT 0,
      worker text,
      holder_token text,
      lease_expires_at timestamptz,
      job_id text,
      lineage_id text,
      last_checkpoint text,
      current_task text,
      input_tokens bigint NOT NULL DEFAULT 0,
      output_tokens bigint NOT NULL DEFAULT 0,
      output text,
      error text,
      error_code text,
      question text,
      question_method text,
      question_kind text,
      human_input text,
      pause_checkpoint text,
      fork_of text,
      fork_from text,
      task_outputs jsonb,
      rerun_from text,
      passed_over jsonb,
      renewal_holder text,
      renewal_input_tokens bigint NOT NULL DEFAULT 0,
      renewal_output_tokens bigint NOT NULL DEFAULT 0,
      layout_version integer NOT NULL DEFAULT ${RUNS_LAYOUT_VERSION},
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      finished_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX IF NOT EXISTS worker_runs_status ON ${table} (status, lease_expires_at);
    CREATE INDEX IF NOT EXISTS worker_runs_created ON ${table} (created_at);
    ${upgradeToForkedRuns(table, schema)}
    ${upgradeToPausedRuns(table, schema)}
    ${upgradeToPassedOverRuns(table, schema)}
    ${upgradeToPassedOverIndex(table, schema)}
    ${upgradeToRerunForks(table, schema)}
    ${upgradeToRenewalTotals(table, schema)}
    COMMIT;`);
    } catch (error) {
      if (!connectionLost(error)) await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}

/**
 * Layout 1 → 2: adds the pause columns and the `paused` status (the status check gets a name of its
 * own, so whether it is done is a catalog lookup).
 */
function upgradeToPausedRuns(table: string, schema: string): string {
  return upgradeBlock(
    table,
    schema,
    'pause_checkpoint',
    `ADD COLUMN question text, ADD COLUMN question_method text, ADD COLUMN question_kind text,
     ADD COLUMN human_input text, ADD COLUMN pause_checkpoint text`,
    `IF NOT EXISTS (SELECT 1 FROM pg_constraint
                     WHERE conrelid = ${literal(table)}::regclass AND conname = 'worker_runs_status_known') THEN
       ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS worker_runs_status_check;
       ALTER TABLE ${table} ADD CONSTRAINT worker_runs_status_known
         CHECK (status IN ('queued', 'running', 'paused', 'completed', 'failed', 'cancelled'));
     END IF;`,
  );
}

/** Layout 2 → 3: adds `passed_over` (see unregistered-runs.ts). */
function upgradeToPassedOverRuns(table: string, schema: string): string {
  return upgradeBlock(table, schema, 'passed_over', 'ADD COLUMN passed_over jsonb');
}

/**
 * Layout 3 → 4: an index of the queued runs that were passed over, in the order a worker takes them
 * by name (`RunClaims.passedOver`, at every poll of every slot): led by the name, so the claim reads
 * only the rows of the names it registers, not every passed-over row of names nobody registers (a
 * typo, a removed crew: 20,000 such rows cost 2.4 ms a poll when the name was a filter).
 * Looked up first, like the columns: CREATE INDEX IF NOT EXISTS would lock the table at every start.
 * Layout 4 was never released with its first index, `worker_runs_passed_over` (no name), but a
 * development database may have it: it is dropped once the new one is there (a lookup when it is not).
 */
function upgradeToPassedOverIndex(table: string, schema: string): string {
  return `
    DO $upgrade$ BEGIN
      IF to_regclass(${literal(`"${schema}".worker_runs_passed_over_by_name`)}) IS NULL THEN
        CREATE INDEX worker_runs_passed_over_by_name ON ${table} (name, priority DESC, created_at)
          WHERE status = 'queued' AND passed_over IS NOT NULL;
      END IF;
      IF to_regclass(${literal(`"${schema}".worker_runs_passed_over`)}) IS NOT NULL THEN
        DROP INDEX "${schema}".worker_runs_passed_over;
      END IF;
    END $upgrade$;`;
}

/**
 * Adds the columns of a run made by `queue.fork` (the run it forks, the checkpoint it branches off,
 * its edited task outputs) to a table made before them.
 */
function upgradeToForkedRuns(table: string, schema: string): string {
  return upgradeBlock(
    table,
    schema,
    'fork_from',
    'ADD COLUMN fork_of text, ADD COLUMN fork_from text, ADD COLUMN task_outputs jsonb',
  );
}

/** Layout 4 → 5: adds `rerun_from`, the method a flow's fork re-runs (see `ForkStart.rerunFrom`). */
function upgradeToRerunForks(table: string, schema: string): string {
  return upgradeBlock(table, schema, 'rerun_from', 'ADD COLUMN rerun_from text');
}

/** Layout 5 → 6: adds what the row counted of a hold's renewals (see HoldKeeper). */
function upgradeToRenewalTotals(table: string, schema: string): string {
  return upgradeBlock(
    table,
    schema,
    'renewal_holder',
    `ADD COLUMN renewal_holder text, ADD COLUMN renewal_input_tokens bigint NOT NULL DEFAULT 0,
     ADD COLUMN renewal_output_tokens bigint NOT NULL DEFAULT 0`,
  );
}

/**
 * A block that adds `columns` (an ALTER TABLE's clauses) to the runs table unless `probeColumn` is
 * there, then runs `more` (statements that check themselves). Checked first, so a table that is up to
 * date is not locked by an ALTER at every worker's start.
 */
function upgradeBlock(
  table: string,
  schema: string,
  probeColumn: string,
  columns: string,
  more = '',
): string {
  return `
    DO $upgrade$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                      WHERE table_schema = ${literal(schema)} AND table_name = 'worker_runs'
                        AND column_name = ${literal(probeColumn)}) THEN
        ALTER TABLE ${table} ${columns};
      END IF;
      ${more}
    END $upgrade$;`;
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
