import {
  connectionLost,
  credentialParameters,
  SocketClosingClient,
  withPooledClient,
} from '@crewline/provider-postgres/internal';
import pg from 'pg';
import { workerError } from './errors.js';

const schemaNamePattern = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Where the queue lives: a Postgres server and the schema its runs table shares with checkpoints. */
export interface QueueLocation {
  /** The connection string without `schema=` (pg would send it to the server as a setting). */
  connectionString: string;
  /** The URL as given, `schema=` included: the checkpoint location of the runs. */
  checkpointLocation: string;
  /** Schema of the runs table and of the checkpoints (`crewline` unless the URL or option names one). */
  schema: string;
  /** Schema of pg-boss's tables: `<schema>_queue`. */
  queueSchema: string;
  /** The URL without its password (user info and credential parameters), for messages and listings. */
  display: string;
}

/** Reads a `postgres://` URL (optionally `?schema=name`) into a {@link QueueLocation}. */
export function parseQueueLocation(url: string, schemaOption?: string): QueueLocation {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw workerError('invalid_config', 'location is not a URL; pass postgres://user@host:5432/database', {
      cause: error,
    });
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw workerError(
      'invalid_config',
      `location must be a postgres:// or postgresql:// URL (the queue and its checkpoints live in Postgres), got ${parsed.protocol}//…`,
    );
  }
  const schema = parsed.searchParams.get('schema') ?? schemaOption ?? 'crewline';
  if (!schemaNamePattern.test(schema)) {
    throw workerError(
      'invalid_name',
      `schema ${JSON.stringify(schema)} is not a plain name; use letters, digits and _ (at most 63)`,
    );
  }
  const withSchema = new URL(parsed.href);
  withSchema.searchParams.set('schema', schema);
  parsed.searchParams.delete('schema');
  // Printed by `crewline runs list` and its --json: a password given as a parameter
  // (`?password=`, `?sslpassword=`) must go as the user-info one does, not only that one.
  const display = new URL(withSchema.href);
  display.password = '';
  for (const name of credentialParameters) display.searchParams.delete(name);
  return {
    connectionString: parsed.href,
    checkpointLocation: withSchema.href,
    schema,
    queueSchema: `${schema}_queue`,
    display: display.href,
  };
}

/** A pool on the queue's server. */
export function openPool(location: QueueLocation, max: number, applicationName: string): pg.Pool {
  const pool = new pg.Pool({
    Client: SocketClosingClient,
    connectionString: location.connectionString,
    max,
    application_name: applicationName,
    connectionTimeoutMillis: 10_000,
  });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Runs `work` in one transaction on one client of `pool`. A client whose connection dies meanwhile
 * (the server restarted) is dropped, not given back, and the error that says so is thrown: the
 * process does not crash on the client's `error` event.
 */
export function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withPooledClient(pool, async (client) => {
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A dead connection has no transaction left to roll back (the server ended it).
      if (!connectionLost(error)) await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  });
}
