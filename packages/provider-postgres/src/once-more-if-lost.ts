import { setTimeout as sleep } from 'node:timers/promises';
import { connectionLost } from './connection-lost.js';

/**
 * How long an operation whose connection was lost waits before its one more attempt: long enough for
 * the pool to drop the other connections the server ended with it (their ends arrive a moment later)
 * and for a server that restarts at once (`pg_ctl restart`, a crash's recovery) to take connections
 * again; short enough for a process that is ending on Ctrl+C, which waits for its last checkpoint
 * and its lease's release.
 */
export const lostConnectionPauseMs = 1_000;

/**
 * Runs `attempt`; when the connection it used was lost ({@link connectionLost}: the server restarted,
 * failed over or ended the session, or refused the next connection while it came back), waits
 * {@link lostConnectionPauseMs} and runs `again` once, on a fresh connection (a lost one is never
 * lent again). Only for operations that may run twice: a lease operation is idempotent by its owner
 * token, and a write sent again first looks by id for what its first attempt stored.
 *
 * `reachedBefore`: the server answered this provider before. A server never reached (a wrong port, a
 * server that is down) is not a lost connection, and its refusal is reported at once.
 *
 * A query given up on (a `QueryTimedOut`: the server silent for `queryTimeoutMs` and a check on a new
 * connection unanswered, or a lease query past its own limit) is not tried again either, and needs no
 * rule of its own here: `withPooledClient` throws the `QueryTimedOut` itself, which is no lost
 * connection. A server that stayed silent for the whole limit (a network that drops packets) would
 * most likely stay so, and a process ending on Ctrl+C would wait a second limit, plus a connection
 * timeout, for nothing. Nor would trying again help a lease query past its own limit on a busy
 * server: the first attempt may still be running there, and the one sent again would wait for it. The caller hears of the
 * failure at once (the runtime writes a failed group again one by one, on its own, unless the server
 * did not answer the check either: `details.serverAnswered`); a write that timed
 * out and was stored after all is accepted as stored when written again, so nothing is stored twice.
 */
export async function onceMoreIfLost<T>(
  reachedBefore: () => boolean,
  attempt: () => Promise<T>,
  again: () => Promise<T> = attempt,
): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    if (!connectionLost(error) || !reachedBefore()) throw error;
    await sleep(lostConnectionPauseMs);
    return again();
  }
}
