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
