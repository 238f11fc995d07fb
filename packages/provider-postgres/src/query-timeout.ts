import type pg from 'pg';

/**
 * A query that got no answer within its time limit (node-postgres' per-query `query_timeout`): the
 * server stopped answering (a network that silently drops packets, a host that froze) or is too slow
 * for the limit. The client it ran on is closed at once (see `SocketClosingClient`): the query
 * may still run on the server, and whatever is sent after it on that connection would wait behind it.
 * Never a lost connection: it is not tried again (see `onceMoreIfLost`).
 */
export class QueryTimedOut extends Error {
  /**
   * @param timeoutMs the limit the query ran under.
   * @param ownLimit the query set its own limit, tighter than the provider's `queryTimeoutMs` (a lease
   *   query's, derived from its lease time).
   */
  constructor(
    readonly timeoutMs: number,
    readonly ownLimit: boolean,
    options: { cause: unknown },
  ) {
    super(`no answer within ${timeoutMs} ms`, options);
    this.name = 'QueryTimedOut';
  }
}

/** Whether `error` is node-postgres' own report of a query given up on after its `query_timeout`. */
export function isQueryReadTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Query read timeout';
}

/** The {@link QueryTimedOut} among `error` and the causes it wraps (at most four deep); undefined when none. */
export function queryTimedOutIn(error: unknown): QueryTimedOut | undefined {
  let current = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth += 1) {
    if (current instanceof QueryTimedOut) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
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
