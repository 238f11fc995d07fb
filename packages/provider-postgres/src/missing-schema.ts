import type { CrewlineError } from '@crewline/events';
import type { PoolClient } from 'pg';
import { postgresError } from './errors.js';

/** How many schemas holding crewline checkpoints a refusal names at most. */
const namedSchemas = 5;

/** Whether `schema` exists on the server (empty or not). */
export async function schemaExists(client: PoolClient, schema: string): Promise<boolean> {
  const { rowCount } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
  return (rowCount ?? 0) > 0;
}

/** The schemas of the database that hold crewline's layout (a `crewline_meta` table), by name. */
async function crewlineSchemas(client: PoolClient): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT n.nspname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relname = 'crewline_meta' AND c.relkind = 'r' ORDER BY n.nspname LIMIT $1`,
    [namedSchemas + 1],
  );
  return rows.map((row) => row.name);
}

/**
 * The refusal of a read of a location whose schema does not exist: `not_found`, the code a missing
 * directory or database file gets (the CLI's "does not exist", exit code 3). A misspelt `?schema=`
 * otherwise read as an empty store. Names the schemas that do hold checkpoints, so the one meant is
 * seen at once.
 */
export async function missingSchemaError(
  client: PoolClient,
  schema: string,
  location: string,
): Promise<CrewlineError> {
  const holding = await crewlineSchemas(client);
  const listed = holding
    .slice(0, namedSchemas)
    .map((name) => `"${name}"`)
    .join(', ');
  const known =
    holding.length === 0
      ? 'no schema of this database holds crewline checkpoints yet'
      : `schemas holding crewline checkpoints here: ${listed}${holding.length > namedSchemas ? ', ...' : ''}`;
  return postgresError(
    'not_found',
    `schema "${schema}" does not exist in ${location}; check the schema name (?schema= in the URL; ${known}), or write a checkpoint there first (the first write creates it)`,
    { details: { schema } },
  );
}
