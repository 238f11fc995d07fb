import { CrewlineError, type CrewlineErrorCode, type CrewlineErrorOptions } from '@crewline/events';
import { connectionLost } from './connection-lost.js';
import { queryTimedOutIn } from './query-timeout.js';

/** The component name every error of this package carries. */
export const component = 'provider-postgres';

/** A {@link CrewlineError} from the Postgres provider. */
export function postgresError(
  code: CrewlineErrorCode,
  message: string,
  options?: CrewlineErrorOptions,
): CrewlineError {
  return new CrewlineError(component, code, message, options);
}

/** The SQLSTATE of an error the server sent (`23505`, ...), or the Node code of a socket error. */
export function errorCode(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** SQLSTATEs the provider's own functions raise (see schema.ts). */
export const raised = {
  tooLarge: 'CL001',
  leaseLost: 'CL002',
  parentMissing: 'CL003',
  needEvents: 'CL004',
  damaged: 'CL005',
} as const;

const unreachable = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENOENT',
]);

/**
 * The role a refused login named when the server has no such role (SQLSTATE 28000, `role "x" does
 * not exist`): a password cannot help then, so the refusal must not ask for one.
 */
export function missingRole(error: unknown): string | undefined {
  if (errorCode(error) !== '28000') return undefined;
  return /role "([^"]*)" does not exist/.exec(reasonOf(error))?.[1];
}

/**
 * The database a login was refused into because it accepts no connections (SQLSTATE 55000, `database
 * "x" is not currently accepting connections`); undefined for any other error.
 */
export function databaseNotAccepting(error: unknown): string | undefined {
  if (errorCode(error) !== '55000') return undefined;
  return /database "([^"]*)" is not currently accepting connections/.exec(reasonOf(error))?.[1];
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Turns anything thrown while talking to Postgres into a typed error naming the location (always the
 * redacted URL: a password never reaches a message). Crewline errors pass through untouched.
 */
export function toCrewlineError(error: unknown, what: 'write' | 'read', location: string): CrewlineError {
  if (CrewlineError.isInstance(error)) return error;
  const code = errorCode(error);
  const reason = reasonOf(error);
  const failed = what === 'write' ? 'write_failed' : 'read_failed';
  const timedOut = queryTimedOutIn(error);
  if (timedOut !== undefined) {
    const mayLand =
      what === 'write'
        ? ' The server may still finish it after the provider stopped waiting: writing the same checkpoint again accepts it as stored.'
        : '';
    const { timeoutMs } = timedOut;
    const limit = 'the PostgresProvider option queryTimeoutMs, or query_timeout_ms in the location';
    const givenUp = `the ${what} was given up and its connection closed.${mayLand}`;
    const why = {
      'no answer': `did not answer within ${timeoutMs} ms (${limit}), and a check on a new connection got no answer either: ${givenUp} Check that the server runs and that the network to it passes packets`,
      'session gone': `did not answer within ${timeoutMs} ms (${limit}), and a check on a new connection found the query's session gone without a word of it on the query's connection: ${givenUp} Check that the network to the server keeps long-lived connections (a firewall or NAT that drops them)`,
      'own limit': `did not answer a lease query within ${timeoutMs} ms (its own limit, from the lease's ttlMs or 5 s): ${givenUp} The server or the network to it may be down, or the server busy (a lock held by a stuck transaction)`,
      'read timeout': `did not answer within ${timeoutMs} ms (the pool's query_timeout): ${givenUp}`,
    }[timedOut.reason];
    return postgresError(
      failed,
      `the Postgres server of ${location} ${why}`,
      // Unreachable for the CLI's exit code; not a lost connection: trying again goes into the same
      // silence. Unless the check reached the server (the session gone): then a new connection works,
      // and a writer of a group writes its checkpoints again (runtime-state's write queue).
      {
        cause: error,
        details: {
          unreachable: true,
          timedOut: true,
          timeoutMs,
          ...(timedOut.reason === 'session gone' ? { serverAnswered: true } : {}),
        },
      },
    );
  }
  if (code !== undefined && unreachable.has(code)) {
    return postgresError(
      failed,
      `cannot reach the Postgres server of ${location} (${reason}); check that it runs and that host and port are right`,
      // Nothing is wrong with a checkpoint: the CLI exits with its "cannot be reached" code on this.
      { cause: error, details: { unreachable: true } },
    );
  }
  const role = missingRole(error);
  if (role !== undefined) {
    return postgresError(
      'invalid_config',
      `the Postgres server of ${location} has no role "${role}" (the user the URL logs in as); put an existing user in the URL (postgres://user@host/database), or create this one (createuser ${role}, or CREATE ROLE ... LOGIN)`,
      { cause: error },
    );
  }
  // 28P01: a password was sent and is wrong. Telling the user to put one in would send them looking
  // for a place the password is already in.
  if (code === '28P01') {
    return postgresError(
      'invalid_config',
      `the Postgres server of ${location} refused the password (${reason}); check it: the one in the URL, else PGPASSWORD or ~/.pgpass`,
      { cause: error },
    );
  }
  if (code === '28000') {
    return postgresError(
      'invalid_config',
      `the Postgres server of ${location} refused the login (${reason}); put the password in the URL or in PGPASSWORD (or ~/.pgpass)`,
      { cause: error },
    );
  }
  if (/client password must be/.test(reason)) {
    return postgresError(
      'invalid_config',
      `the Postgres server of ${location} asks for a password and none was given; put it in PGPASSWORD (or ~/.pgpass), or in the URL after the user name and a colon`,
      { cause: error },
    );
  }
  if (code === '3D000') {
    return postgresError(
      'invalid_config',
      `the database of ${location} does not exist (${reason}); create it (createdb) or point the URL at an existing one`,
      // Not `not_found`: a reader that takes a missing location for an empty one (a schema not
      // created yet) must not take a missing database for one, which no write creates. The CLI
      // still exits with its "does not exist" code on it, as on a missing schema or directory.
      { cause: error, details: { missingDatabase: true } },
    );
  }
  // FATAL 55000 at login (ALTER DATABASE ... ALLOW_CONNECTIONS false, a template database): every
  // new connection meets it, so it is neither a lost connection nor anything a retry fixes.
  const closed = databaseNotAccepting(error);
  if (closed !== undefined) {
    return postgresError(
      'invalid_config',
      `the database "${closed}" of ${location} does not accept connections (${reason}); allow them (ALTER DATABASE ${closed} ALLOW_CONNECTIONS true, as its owner or a superuser) or point the URL at another database`,
      { cause: error },
    );
  }
  if (code === '42501') {
    return postgresError(
      failed,
      `the Postgres user of ${location} lacks a privilege (${reason}); grant it USAGE and CREATE on the schema (or on the database, for the first write)`,
      { cause: error },
    );
  }
  if (code === '53300') {
    return postgresError(
      failed,
      `the Postgres server of ${location} accepts no more connections now (${reason}); lower poolSize or raise max_connections`,
      { cause: error },
    );
  }
  // After the refusals of a login (FATAL too): a session the server ended once it was open.
  if (connectionLost(error)) {
    return postgresError(
      failed,
      `the connection to the Postgres server of ${location} was lost (${reason}): the server restarted, failed over or ended the session; try again, the next ${what} opens a new connection`,
      // Retryable as an unreachable server is: nothing is wrong with a checkpoint.
      { cause: error, details: { unreachable: true, connectionLost: true } },
    );
  }
  return postgresError(failed, `${what} of ${location} failed: ${reason}`, { cause: error });
}
