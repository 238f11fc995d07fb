import { expect, it } from 'vitest';
import { connectionLost } from './connection-lost.js';

function serverError(code: string, message: string, severity = 'FATAL'): Error {
  return Object.assign(new Error(message), { code, severity });
}

// Before: every FATAL counted as a lost connection, so queue.waitForEnd (the worker uses this rule)
// polled forever on a changed password or a dropped database.
it('a FATAL refusal a fresh connection meets again is not a lost connection', () => {
  for (const error of [
    serverError('28P01', 'password authentication failed for user "app"'),
    serverError('28000', 'role "app" does not exist'),
    serverError('3D000', 'database "agents" does not exist'),
    serverError('55000', 'database "agents" is not currently accepting connections'),
    serverError('53300', 'sorry, too many clients already'),
  ]) {
    expect(connectionLost(error), error.message).toBe(false);
  }
});

it('the socket breaking or the server ending the session is a lost connection', () => {
  for (const error of [
    Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }),
    serverError('57P01', 'terminating connection due to administrator command'),
    serverError('57P02', 'terminating connection because of crash of another server process'),
    serverError('57P03', 'the database system is starting up'),
    serverError('08P01', 'protocol violation'),
    new Error('Connection terminated unexpectedly'),
  ]) {
    expect(connectionLost(error), error.message).toBe(true);
  }
});
