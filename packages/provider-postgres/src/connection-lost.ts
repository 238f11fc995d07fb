/**
 * Whether `error` says the connection it came from is dead, so the client must be dropped rather than
 * lent again, and the operation can be tried again on a fresh one: the socket closed (`Connection
 * terminated unexpectedly`, a reset), a client already broken (`not queryable`), or the server ending
 * the session (a FATAL or PANIC message; SQLSTATE 57P01 admin shutdown, 57P02 crash shutdown, 57P03
 * cannot connect now, or class 08, connection exception).
 */
export function connectionLost(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  if (severity === 'FATAL' || severity === 'PANIC') return true;
  if (typeof code === 'string') {
    if (code === '57P01' || code === '57P02' || code === '57P03' || code.startsWith('08')) return true;
    if (socketCodes.has(code)) return true;
  }
  return /Connection terminated|is not queryable/i.test(error.message);
}

/** Node's codes of a socket that broke under a connected client. */
const socketCodes = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED', 'EHOSTUNREACH']);
