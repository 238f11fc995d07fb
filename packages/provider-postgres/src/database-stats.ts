import type pg from 'pg';
import type { DatabaseStats } from './reports.js';
import { SCHEMA_VERSION } from './schema.js';
import type { SchemaHandle } from './schema-handle.js';

export async function readDatabaseStats(client: pg.PoolClient, handle: SchemaHandle): Promise<DatabaseStats> {
  const s = handle.quoted;
  const { rows } = await client.query<Record<string, string>>(
    `SELECT (SELECT value FROM ${s}.crewline_meta WHERE key = 'schema_version') AS version,
      (SELECT count(*) FROM ${s}.checkpoints) AS checkpoints, (SELECT count(*) FROM ${s}.streams) AS streams,
      (SELECT count(*) FROM ${s}.events) AS events, (SELECT count(*) FROM ${s}.chunks) AS chunks,
      (SELECT count(*) FROM ${s}.leases) AS leases,
      (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r') AS total`,
    [handle.schema],
  );
  const row = rows[0]!;
  return {
    schema: handle.schema,
    schemaVersion: Number(row.version ?? SCHEMA_VERSION),
    checkpoints: Number(row.checkpoints),
    streams: Number(row.streams),
    events: Number(row.events),
    chunks: Number(row.chunks),
    leases: Number(row.leases),
    totalBytes: Number(row.total),
  };
}
