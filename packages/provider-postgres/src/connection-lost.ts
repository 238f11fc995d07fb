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
 * (see errors.ts), and a caller retrying on them would retry forever ({@link refusalMayPass} names
 * those worth trying again until a deadline).
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

/**
 * Node's codes of a socket that broke under a connected client, or could not reach the server (a
 * name lookup that failed for now, EAI_AGAIN, included: a DNS hiccup during a failover).
 */
const socketCodes = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** `error` and the causes it wraps (a CrewlineError's `cause`), outermost first, at most four deep. */
export function chainOf(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let current = error; current instanceof Error && chain.length < 4; ) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

/**
 * Whether `error`, or a cause it wraps, is a lost connection ({@link connectionLost}): a component's
 * own error (the worker's "cannot reach the Postgres server" when its queue could not be opened)
 * keeps the socket's error as its cause.
 */
export function connectionLostWithin(error: unknown): boolean {
  return lostConnectionIn(error) !== undefined;
}

/** The error, of `error` and the causes it wraps, that says the connection died; undefined when none does. */
export function lostConnectionIn(error: unknown): Error | undefined {
  return chainOf(error).find(connectionLost);
}

/**
 * Refusals that may pass and may also last, so a caller tries again only until a deadline it was
 * given, never forever: a server at max_connections or a role at its connection limit (53300, it
 * accepts one once another ends), and a host name not found (ENOTFOUND: a record not yet back during
 * a failover, or a typo in the host that no retry fixes). Looked for in `error` and the causes it wraps.
 */
export function refusalMayPass(error: unknown): boolean {
  return chainOf(error).some((link) => {
    const { code } = link as { code?: unknown };
    return code === '53300' || code === 'ENOTFOUND';
  });
}
