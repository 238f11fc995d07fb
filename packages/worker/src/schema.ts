import type pg from 'pg';

/** The layout of the runs table; bumped with a migration when it changes. */
export const RUNS_LAYOUT_VERSION = 1;

/** `"<schema>".worker_runs`, quoted. */
export function runsTable(schema: string): string {
  return `"${schema}".worker_runs`;
}

/**
 * Creates the schema and the runs table when missing. Under a transaction-level advisory lock keyed
 * by the schema: concurrent first workers create it once (CREATE ... IF NOT EXISTS alone races on
 * the catalog).
 */
export async function migrateRunsTable(pool: pg.Pool, schema: string): Promise<void> {
  const table = runsTable(schema);
  const client = await pool.connect();
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
      status text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
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
      layout_version integer NOT NULL DEFAULT ${RUNS_LAYOUT_VERSION},
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      finished_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX IF NOT EXISTS worker_runs_status ON ${table} (status, lease_expires_at);
    CREATE INDEX IF NOT EXISTS worker_runs_created ON ${table} (created_at);
    COMMIT;`);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
