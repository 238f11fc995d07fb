import { databaseNotAccepting } from '@crewline/provider-postgres/internal';
import type { QueueLocation } from './connection.js';
import { workerError } from './errors.js';

const socketFailures = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** `error` and, for an AggregateError (one per address a host name resolved to), the errors inside. */
function failuresOf(error: unknown): { code?: unknown; message?: unknown }[] {
  const inner = error instanceof AggregateError ? (error.errors as unknown[]) : [];
  return [error, ...inner].filter((value): value is object => typeof value === 'object' && value !== null);
}

/**
 * The queue could not be opened. A server that does not answer is named by host and port (never the
 * password) with code `read_failed` and `details.unreachable` (the CLI's "cannot be reached" exit
 * code, 7, like the checkpoint commands'); a refused login is a configuration error; anything else a failed write.
 */
export function queueOpenError(location: QueueLocation, error: unknown) {
  const failures = failuresOf(error);
  const reason =
    failures
      .map((failure) => (typeof failure.message === 'string' ? failure.message : ''))
      .filter((message) => message !== '')
      .join('; ') || String(error);
  const codes = failures.map((failure) => failure.code);
  const url = new URL(location.display);
  if (codes.some((code) => typeof code === 'string' && socketFailures.has(code))) {
    return workerError(
      'read_failed',
      `cannot reach the Postgres server at ${url.hostname}:${url.port || '5432'} (${reason}) for the run queue ${location.display}; start it, or fix host and port in --location or CREWLINE_WORKER_LOCATION`,
      { cause: error, details: { unreachable: true } },
    );
  }
  // No password makes a role the server does not have: name it instead of asking for one.
  const role = /role "([^"]*)" does not exist/.exec(reason)?.[1];
  if (codes.includes('28000') && role !== undefined) {
    return workerError(
      'invalid_config',
      `the Postgres server of the run queue ${location.display} has no role "${role}" (the user the URL logs in as); put an existing user in --location or CREWLINE_WORKER_LOCATION, or create this one (createuser ${role}, or CREATE ROLE ... LOGIN)`,
      { cause: error },
    );
  }
  // pg's own words when it has no password to answer the server's request with: not the server's
  // refusal, so said as what it is (as the checkpoint commands say it).
  if (/client password must be/.test(reason)) {
    return workerError(
      'invalid_config',
      `the Postgres server of the run queue ${location.display} asks for a password and none was given; put it in PGPASSWORD (or ~/.pgpass) or in --location / CREWLINE_WORKER_LOCATION after the user name and a colon`,
      { cause: error },
    );
  }
  // 28P01: a password was sent and is wrong, so the hint is to check it rather than to put one in.
  if (codes.includes('28P01')) {
    return workerError(
      'invalid_config',
      `the Postgres server of the run queue ${location.display} refused the password (${reason}); check it: the one in --location / CREWLINE_WORKER_LOCATION, else PGPASSWORD or ~/.pgpass`,
      { cause: error },
    );
  }
  if (codes.includes('28P01') || codes.includes('28000') || /password/i.test(reason)) {
    return workerError(
      'invalid_config',
      `the Postgres server of the run queue ${location.display} refused the login (${reason}); put the password in PGPASSWORD (or ~/.pgpass) or the URL`,
      { cause: error },
    );
  }
  // 3D000: the database in the URL is not there (the checkpoint commands say the same of theirs).
  if (codes.includes('3D000')) {
    return workerError(
      'invalid_config',
      `the database of the run queue ${location.display} does not exist (${reason}); create it (createdb) or point --location / CREWLINE_WORKER_LOCATION at an existing one`,
      // The CLI exits with its "does not exist" code on it (3), as on a missing queue schema.
      { cause: error, details: { missingDatabase: true } },
    );
  }
  // 55000 at login (ALTER DATABASE ... ALLOW_CONNECTIONS false): said as the checkpoint commands say it.
  const closed = failures.map(databaseNotAccepting).find((name) => name !== undefined);
  if (closed !== undefined) {
    return workerError(
      'invalid_config',
      `the database "${closed}" of the run queue ${location.display} does not accept connections (${reason}); allow them (ALTER DATABASE ${closed} ALLOW_CONNECTIONS true, as its owner or a superuser) or point --location / CREWLINE_WORKER_LOCATION at another database`,
      { cause: error },
    );
  }
  return workerError('write_failed', `could not open the run queue at ${location.display}: ${reason}`, {
    cause: error,
  });
}
