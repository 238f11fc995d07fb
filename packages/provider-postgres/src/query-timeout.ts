import type pg from 'pg';
import { chainOf } from './connection-lost.js';

/**
 * Why a query was given up on:
 * - `no answer`: not a byte came from the server for the whole silence limit (the provider's
 *   `queryTimeoutMs`), and a check on a new connection got no answer either (a network that silently
 *   drops packets, a host that froze);
 * - `session gone`: the same silence, and the check found the server up but without the query's
 *   session any more (it ended, and the news of it never came through);
 * - `own limit`: the query's own limit passed (a lease query's, derived from its lease time), however
 *   much the server was answering otherwise;
 * - `read timeout`: node-postgres' own `query_timeout` of the pool passed (not the provider's pools,
 *   which leave it unset, see `SocketClosingClient`).
 */
export type QueryTimeoutReason = 'no answer' | 'session gone' | 'own limit' | 'read timeout';

/**
 * A query given up on: its client is closed at once (see `SocketClosingClient`): the query may still
 * run on the server, and whatever is sent after it on that connection would wait behind it. Never a
 * lost connection: it is not tried again (see `onceMoreIfLost`).
 */
export class QueryTimedOut extends Error {
  /**
   * @param timeoutMs the limit that passed: the silence limit, or the query's own.
   * @param reason why it was given up on ({@link QueryTimeoutReason}).
   */
  constructor(
    readonly timeoutMs: number,
    readonly reason: QueryTimeoutReason,
    options: { cause: unknown },
  ) {
    super(`no answer within ${timeoutMs} ms (${reason})`, options);
    this.name = 'QueryTimedOut';
  }

  /** The query set its own limit (a lease query's, derived from its lease time). */
  get ownLimit(): boolean {
    return this.reason === 'own limit';
  }
}

/** Whether `error` is node-postgres' own report of a query given up on after its `query_timeout`. */
export function isQueryReadTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Query read timeout';
}

/** The {@link QueryTimedOut} among `error` and the causes it wraps; undefined when none. */
export function queryTimedOutIn(error: unknown): QueryTimedOut | undefined {
  return chainOf(error).find((link): link is QueryTimedOut => link instanceof QueryTimedOut);
}

/** The query that timed out on each client that had one: that client must never be lent again. */
const timedOutClients = new WeakMap<pg.Client, QueryTimedOut>();

/** Remembers that a query of `client` timed out (the client is being closed). */
export function rememberTimedOut(client: pg.Client, timedOut: QueryTimedOut): void {
  if (!timedOutClients.has(client)) timedOutClients.set(client, timedOut);
}

/** The first query of `client` that timed out; undefined when none did. */
export function timedOutOn(client: pg.Client): QueryTimedOut | undefined {
  return timedOutClients.get(client);
}
