import { logger } from '@crewline/events';
import pg from 'pg';
import { parse } from 'pg-connection-string';
import { component } from './errors.js';
import { credentialsOf, queryTimeoutOf } from './location.js';
import type { ResolvedPostgresProviderOptions } from './options.js';
import { type SilenceWatchConfig, SocketClosingClient } from './socket-closing-client.js';

/**
 * A `pg.Pool` for one server (the redacted URL without `schema`). The password is looked up at
 * connect time — from the URL the location was given as, else `PGPASSWORD` or `~/.pgpass` (pg's own
 * fallbacks) — and never stored in the pool's configuration under the URL's name.
 */
export function createPool(server: string, options: ResolvedPostgresProviderOptions): pg.Pool {
  const silenceLimitMs = () => queryTimeoutOf(server) ?? options.queryTimeoutMs;
  const parsed = parse(server) as Record<string, unknown>;
  const { schema: _schema, password: _password, ...connection } = parsed;
  const config: pg.PoolConfig & SilenceWatchConfig = {
    ...(connection as pg.PoolConfig),
    Client: SocketClosingClient,
    // An empty user or database in the URL means "use the default" (PGUSER, the user name...).
    user: (connection.user as string | undefined) || undefined,
    database: (connection.database as string | undefined) || undefined,
    host: (connection.host as string | undefined) || undefined,
    port: connection.port ? Number(connection.port) : undefined,
    password: () => credentialsOf(server).get('password') ?? process.env.PGPASSWORD ?? '',
    max: options.poolSize,
    connectionTimeoutMillis: options.connectionTimeoutMs,
    // How long a query may go without a byte from the server before SocketClosingClient checks the
    // server (and gives the query up when the check gets no answer); a location's own wins. Not pg's
    // query_timeout: that limits how long a query may take, and a write behind a lock, a layout upgrade
    // of a big store or a large checkpoint over a slow link may take longer, and must not fail for it.
    silenceLimitMs,
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
