import { logger } from '@crewline/events';
import pg from 'pg';
import { parse } from 'pg-connection-string';
import { component } from './errors.js';
import { credentialsOf } from './location.js';
import type { ResolvedPostgresProviderOptions } from './options.js';

/**
 * A `pg.Client` that closes its socket when it fails to connect. pg leaves the socket of a login it
 * gave up on its own side open (no password for a server that asks for one: "SASL: ... client
 * password must be a string"), and the server waits for an answer until its authentication_timeout
 * (60 s by default): `crewline checkpoint list` said what was wrong at once, then could not end.
 */
class ClosingClient extends pg.Client {
  override connect(): Promise<pg.Client>;
  override connect(callback: ((error: Error) => void) | ((error: null, client: pg.Client) => void)): void;
  override connect(
    callback?: ((error: Error) => void) | ((error: null, client: pg.Client) => void),
  ): Promise<pg.Client> | undefined {
    if (callback) {
      super.connect((error: Error | null) => {
        if (error) this.#dropSocket();
        (callback as (error: Error | null, client: pg.Client) => void)(error, this);
      });
      return;
    }
    return super.connect().catch((error: unknown) => {
      this.#dropSocket();
      throw error;
    });
  }

  #dropSocket(): void {
    // node-postgres keeps the socket on its connection, which its types do not declare.
    (this as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  }
}

/**
 * A `pg.Pool` for one server (the redacted URL without `schema`). The password is looked up at
 * connect time — from the URL the location was given as, else `PGPASSWORD` or `~/.pgpass` (pg's own
 * fallbacks) — and never stored in the pool's configuration under the URL's name.
 */
export function createPool(server: string, options: ResolvedPostgresProviderOptions): pg.Pool {
  const parsed = parse(server) as Record<string, unknown>;
  const { schema: _schema, password: _password, ...connection } = parsed;
  const config: pg.PoolConfig = {
    ...(connection as pg.PoolConfig),
    Client: ClosingClient,
    // An empty user or database in the URL means "use the default" (PGUSER, the user name...).
    user: (connection.user as string | undefined) || undefined,
    database: (connection.database as string | undefined) || undefined,
    host: (connection.host as string | undefined) || undefined,
    port: connection.port ? Number(connection.port) : undefined,
    password: () => credentialsOf(server).get('password') ?? process.env.PGPASSWORD ?? '',
    max: options.poolSize,
    connectionTimeoutMillis: options.connectionTimeoutMs,
    idleTimeoutMillis: 10_000,
    application_name: options.applicationName,
    // Idle connections must not keep a finished program alive; close() ends them anyway.
    allowExitOnIdle: true,
    ...(options.synchronousCommit === 'off' ? { options: '-c synchronous_commit=off' } : {}),
  };
  // The passphrase of an encrypted client key (`sslkey`): libpq's `sslpassword`, node's `passphrase`.
  const sslPassword = credentialsOf(server).get('sslpassword');
  if (sslPassword !== undefined && typeof config.ssl === 'object' && config.ssl !== null) {
    config.ssl = { ...config.ssl, passphrase: sslPassword };
  }
  const pool = new pg.Pool(config);
  pool.on('error', (error) => {
    // An idle connection the server closed: the pool drops it and opens another when needed.
    logger.warn(component, `an idle connection to ${server} failed and was dropped`, error);
  });
  return pool;
}
