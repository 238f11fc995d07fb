/**
 * Whether `error` says the connection it came from is dead, so the client must be dropped rather than
 * lent again, and the operation can be tried again on a fresh one: the socket closed (`Connection
 * terminated unexpectedly`, a reset, a broken pipe), a client already broken (`not queryable`), or the
 * server ending the session as a restart or failover does (SQLSTATE 57P01 admin shutdown, 57P02 crash
 * shutdown, 57P03 cannot connect now, 57P05 idle-session timeout, 25P03 idle-in-transaction timeout,
 * or class 08, connection exception).
 *
 * Not every FATAL message: a refused login (class 28: a wrong password, a missing role), a missing
 * database (3D000), a database that accepts no connections (55000) or a server at max_connections
 * (53300) come as FATAL too, but a fresh connection meets the same refusal; each has its own message
 * (see errors.ts), and a caller retrying on them would retry forever.
 *
 * The one rule for crewline's packages: the worker imports it through `@crewline/provider-postgres/internal`.
 */
export function connectionLost(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code } = error as { code?: unknown };
  if (typeof code === 'string') {
    if (sessionEndedCodes.has(code) || code.startsWith('08')) return true;
    if (socketCodes.has(code)) return true;
  }
  return /Connection terminated|is not queryable/i.test(error.message);
}

/** SQLSTATEs of the server ending a session that a fresh connection may well not meet again. */
const sessionEndedCodes = new Set(['57P01', '57P02', '57P03', '57P05', '25P03']);

/** Node's codes of a socket that broke under a connected client (or could not reach the server). */
const socketCodes = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED', 'EHOSTUNREACH']);
