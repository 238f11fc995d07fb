import type { PoolClient } from 'pg';
import { postgresError } from './errors.js';
import {
  APPLICATION_MARKER,
  crewlineTables,
  lockKey,
  type Migration,
  migrations,
  quoteIdentifier,
  SCHEMA_VERSION,
} from './schema.js';

/** What a schema holds, as far as crewline is concerned. */
export type SchemaState =
  | { kind: 'missing' }
  | { kind: 'crewline'; version: number }
  | { kind: 'foreign'; table: string };

/** Inspects a schema without changing anything (reads never create a schema or a table). */
export async function inspectSchema(client: PoolClient, schema: string): Promise<SchemaState> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = ANY($2::text[])`,
    [schema, ['crewline_meta', ...crewlineTables]],
  );
  const names = new Set(rows.map((row) => row.name));
  if (!names.has('crewline_meta')) {
    const table = crewlineTables.find((name) => names.has(name));
    return table === undefined ? { kind: 'missing' } : { kind: 'foreign', table };
  }
  const meta = await client.query<{ key: string; value: string }>(
    `SELECT key, value FROM ${quoteIdentifier(schema)}.crewline_meta WHERE key IN ('application', 'schema_version')`,
  );
  const values = new Map(meta.rows.map((row) => [row.key, row.value]));
  if (values.get('application') !== APPLICATION_MARKER) return { kind: 'foreign', table: 'crewline_meta' };
  const version = Number(values.get('schema_version') ?? '0');
  return { kind: 'crewline', version: Number.isSafeInteger(version) ? version : Number.POSITIVE_INFINITY };
}

/** Refuses a schema this package cannot use: another application's tables, or a newer layout. */
export function refuseUnusable(
  state: SchemaState,
  schema: string,
  location: string,
  supported: number = SCHEMA_VERSION,
): void {
  if (state.kind === 'foreign') {
    throw postgresError(
      'invalid_config',
      `schema "${schema}" of ${location} holds a table "${state.table}" that is not crewline's; point the location at another schema (?schema=crewline_checkpoints)`,
    );
  }
  if (state.kind === 'crewline' && state.version > supported) {
    throw postgresError(
      'unsupported_version',
      `schema "${schema}" of ${location} has crewline layout version ${state.version}, newer than this @crewline/provider-postgres understands (${supported}); upgrade @crewline/provider-postgres`,
      { details: { schemaVersion: state.version, supportedVersion: supported } },
    );
  }
}

/**
 * Creates the schema and brings its layout to {@link SCHEMA_VERSION}, applying each missing migration
 * in order, in one transaction under the schema's advisory lock (so that concurrent first writes
 * migrate once, and no write runs against a half-made layout). Refuses a newer layout.
 */
export async function migrateSchema(
  client: PoolClient,
  schema: string,
  location: string,
  steps: readonly Migration[] = migrations,
): Promise<number> {
  const quoted = quoteIdentifier(schema);
  const supported = steps.at(-1)?.version ?? 0;
  await client.query('BEGIN');
  try {
    // Checked before taking the lock: the lock is of no use in a schema that cannot be ours.
    refuseUnusable(await inspectSchema(client, schema), schema, location, supported);
    await client.query(`SELECT pg_advisory_xact_lock(${lockKey(schema)})`);
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
    let state = await inspectSchema(client, schema);
    refuseUnusable(state, schema, location, supported);
    if (state.kind === 'missing') {
      await client.query(
        `CREATE TABLE ${quoted}.crewline_meta (key text PRIMARY KEY, value text NOT NULL);
         INSERT INTO ${quoted}.crewline_meta (key, value) VALUES ('application', '${APPLICATION_MARKER}'), ('schema_version', '0');`,
      );
      state = { kind: 'crewline', version: 0 };
    }
    const from = state.kind === 'crewline' ? state.version : 0;
    for (const step of steps) {
      if (step.version <= from) continue;
      await client.query(step.statements(schema));
      await client.query(`UPDATE ${quoted}.crewline_meta SET value = $1 WHERE key = 'schema_version'`, [
        String(step.version),
      ]);
    }
    await client.query('COMMIT');
    return Math.max(from, supported);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
