import { CrewlineError } from '@crewline/events';
import { expect, it } from 'vitest';
import { connectionLost } from './connection-lost.js';
import { toCrewlineError } from './errors.js';

const location = 'postgres://app@db.internal:5432/agents?schema=crewline';

function serverError(code: string, message: string, severity = 'FATAL'): Error {
  return Object.assign(new Error(message), { code, severity });
}

it('a session the server ended is a lost connection, retryable as an unreachable server', () => {
  for (const error of [
    serverError('57P01', 'terminating connection due to administrator command'),
    serverError('57P02', 'terminating connection because of crash of another server process'),
    serverError('57P03', 'the database system is shutting down'),
    serverError('08006', 'connection failure', 'ERROR'),
    new Error('Connection terminated unexpectedly'),
    new Error('Client has encountered a connection error and is not queryable'),
  ]) {
    expect(connectionLost(error), error.message).toBe(true);
    const typed = toCrewlineError(error, 'write', location);
    expect(CrewlineError.hasCode(typed, 'write_failed')).toBe(true);
    expect(typed.details).toMatchObject({ unreachable: true, connectionLost: true });
    expect(typed.message).toContain(`the connection to the Postgres server of ${location} was lost`);
  }
});

// Before, 57P03 (starting up, shutting down: a restart) said to lower poolSize or raise max_connections.
it('a server starting up or shutting down is not called out of connections', () => {
  const typed = toCrewlineError(serverError('57P03', 'the database system is starting up'), 'read', location);
  expect(typed.message).not.toContain('max_connections');
});

it('errors of a usable session and refused logins are not lost connections', () => {
  expect(connectionLost(serverError('23505', 'duplicate key value', 'ERROR'))).toBe(false);
  expect(connectionLost(serverError('CL002', 'lease lost', 'ERROR'))).toBe(false);
  const refused = toCrewlineError(serverError('28P01', 'password authentication failed'), 'read', location);
  expect(refused.code).toBe('invalid_config');
  expect(toCrewlineError(serverError('53300', 'too many clients'), 'read', location).message).toContain(
    'max_connections',
  );
});
