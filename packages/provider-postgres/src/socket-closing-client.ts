import pg from 'pg';
import { isQueryReadTimeout, QueryTimedOut, rememberTimedOut } from './query-timeout.js';

/**
 * A `pg.Client` that closes its socket when it fails to connect, and when a query got no answer
 * within its time limit. pg leaves the socket of a login it gave up on its own side open (no password
 * for a server that asks for one: "SASL: ... client password must be a string"), and the server waits
 * for an answer until its authentication_timeout (60 s by default): a command that said at once what
 * was wrong could not end until then. The provider's pools and the worker's (its queue, its listening
 * connection) use it.
 *
 * A query's limit is the pool's `query_timeout` (the provider's `queryTimeoutMs`), or the query's own
 * `query_timeout` when that is tighter (a lease query's, from its lease time; a looser one is cut to
 * the pool's). pg only stops waiting when the limit passes: the query stays the connection's active
 * one, so what is sent after it (the ROLLBACK of the transaction it was in, the next caller's query)
 * would wait behind an answer that may never come. The client is closed at once instead, and the
 * query fails with a {@link QueryTimedOut}. Only queries that return a promise (every query the
 * provider makes) are watched this way.
 */
export class SocketClosingClient extends pg.Client {
  override connect(): Promise<pg.Client>;
  override connect(callback: ((error: Error) => void) | ((error: null, client: pg.Client) => void)): void;
  override connect(
    callback?: ((error: Error) => void) | ((error: null, client: pg.Client) => void),
  ): Promise<pg.Client> | undefined {
    if (callback) {
      super.connect((error: Error | null) => {
        if (error) socketOf(this)?.destroy();
        (callback as (error: Error | null, client: pg.Client) => void)(error, this);
      });
      return;
    }
    return super.connect().catch((error: unknown) => {
      socketOf(this)?.destroy();
      throw error;
    });
  }
}

/** The socket under a client (node-postgres keeps it on its connection, which its types do not declare). */
export function socketOf(client: pg.Client): { destroy(): void } | undefined {
  return (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream;
}

/** `pg.Client`'s own `query`, which the override below calls. */
const clientQuery = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;

SocketClosingClient.prototype.query = function query(this: SocketClosingClient, ...args: unknown[]) {
  const poolLimit = limitOf(
    (this as unknown as { connectionParameters?: { query_timeout?: unknown } }).connectionParameters
      ?.query_timeout,
  );
  const config = args[0];
  const plainConfig =
    typeof config === 'object' &&
    config !== null &&
    typeof (config as { submit?: unknown }).submit !== 'function';
  const ownLimit = plainConfig ? limitOf((config as { query_timeout?: unknown }).query_timeout) : undefined;
  if (ownLimit !== undefined && poolLimit !== undefined && ownLimit > poolLimit)
    args[0] = { ...(config as object), query_timeout: poolLimit };
  const ownIsTighter = ownLimit !== undefined && (poolLimit === undefined || ownLimit < poolLimit);
  const timeoutMs = ownIsTighter ? ownLimit : poolLimit;
  const result = clientQuery.apply(this, args);
  if (timeoutMs === undefined || !isPromise(result)) return result;
  return result.catch((error: unknown) => {
    if (!isQueryReadTimeout(error)) throw error;
    const timedOut = new QueryTimedOut(timeoutMs, ownIsTighter, { cause: error });
    rememberTimedOut(this, timedOut);
    // Before the caller hears of it (its ROLLBACK would queue behind the query). With a query
    // active, pg's end() destroys the socket rather than saying goodbye to a server that may not
    // hear it; ended on purpose, the client emits no `error` that would read as a lost connection.
    this.end().catch(() => undefined);
    throw timedOut;
  });
} as typeof pg.Client.prototype.query;

/** A time limit in milliseconds, when `value` is one (pg takes `false`, `0` or none as "no limit"). */
function limitOf(value: unknown): number | undefined {
  return typeof value === 'number' && value > 0 ? value : undefined;
}

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
