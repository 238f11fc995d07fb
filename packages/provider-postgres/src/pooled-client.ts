import type pg from 'pg';
import { lostConnectionIn } from './connection-lost.js';
import { isQueryReadTimeout, queryTimedOutIn, timedOutOn } from './query-timeout.js';

/**
 * Runs `work` on a client checked out of `pool`, and gives the client back — or drops it when its
 * connection died. pg-pool listens for a client's `error` events only while it is idle; a connection
 * the server ends while the client is checked out (a restart, a failover, `pg_terminate_backend`)
 * emits one on the client, and an `error` event nobody listens for ends the process. So a listener
 * is attached for as long as the client is out: it remembers the failure, and the client is released
 * with it (pg-pool then closes it instead of lending it again).
 *
 * When the connection died, the error thrown is the one that says so (`Connection terminated
 * unexpectedly`, a FATAL `57P01`, ...) even when `work` threw another it was turned into, so the
 * caller can tell a lost connection (try again on a fresh one) from a refusal. A query that got no
 * answer in time comes first: its client was closed on purpose (`SocketClosingClient`), and
 * what failed after it on that client (its ROLLBACK: "not queryable") is not a lost connection to
 * try again on, but the same silent server.
 */
export async function withPooledClient<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let lost: Error | undefined;
  const onError = (error: Error) => {
    lost ??= error;
  };
  client.on('error', onError);
  let result: T;
  try {
    result = await work(client);
  } catch (error) {
    const timedOut = timedOutOn(client) ?? queryTimedOutIn(error);
    if (timedOut !== undefined) {
      lost = timedOut;
      throw timedOut;
    }
    const died = lostConnectionIn(error) ?? lost;
    if (died !== undefined) {
      lost = died;
      throw died;
    }
    // Only a lost connection (above) or a query given up on discards the client: any other error
    // (the server's, the provider's own, a plain Error thrown to roll a transaction back) leaves the
    // connection as usable as it was, and opening a new backend costs a login. A query given up on
    // (node-postgres' query_timeout, on a client that is not a SocketClosingClient) may still run on
    // the backend: the next caller would wait behind it.
    if (isQueryReadTimeout(error)) lost = error as Error;
    throw error;
  } finally {
    client.removeListener('error', onError);
    // Synchronously after removing ours: pg-pool attaches its own listener as it takes the client back.
    // A client closed after a timeout `work` got over is never lent again either.
    client.release(lost ?? timedOutOn(client));
  }
  return result;
}
