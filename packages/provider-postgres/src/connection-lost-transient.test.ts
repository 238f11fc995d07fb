import { expect, it } from 'vitest';
import { connectionLost, connectionLostWithin, refusalMayPass } from './connection-lost.js';

function coded(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

// Before: a DNS lookup failing for now or a network unreachable for now was not a lost connection,
// so queue.waitForEnd rejected on a hiccup during a failover.
it('a name lookup failing for now and a network unreachable are a lost connection', () => {
  expect(connectionLost(coded('EAI_AGAIN', 'getaddrinfo EAI_AGAIN pg-primary'))).toBe(true);
  expect(connectionLost(coded('ENETUNREACH', 'connect ENETUNREACH 10.0.0.5:5432'))).toBe(true);
});

// A host name not found may be a typo no retry fixes: retried only until a deadline, never as a lost connection.
it('a host name not found and a server at its connection limit may pass, but are not a lost connection', () => {
  for (const error of [
    coded('ENOTFOUND', 'getaddrinfo ENOTFOUND pg-primary'),
    coded('53300', 'sorry, too many clients already'),
  ]) {
    expect(connectionLost(error), error.message).toBe(false);
    expect(refusalMayPass(error), error.message).toBe(true);
  }
  for (const error of [
    coded('28P01', 'password authentication failed for user "app"'),
    coded('3D000', 'database "agents" does not exist'),
    coded('ECONNRESET', 'read ECONNRESET'),
    new Error('boom'),
  ]) {
    expect(refusalMayPass(error), error.message).toBe(false);
  }
});

// Before: the worker's "cannot reach the Postgres server" (its queue could not be opened) hid the
// ECONNREFUSED it wraps, so a wait on a queue not yet opened rejected at once on a server restarting.
it('sees through the causes an error wraps', () => {
  const wrapped = (cause: Error) => new Error('[worker] cannot reach the Postgres server', { cause });
  expect(connectionLostWithin(wrapped(coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')))).toBe(
    true,
  );
  expect(connectionLostWithin(wrapped(coded('28P01', 'password authentication failed')))).toBe(false);
  expect(refusalMayPass(wrapped(coded('53300', 'too many connections for role "app"')))).toBe(true);
  expect(connectionLostWithin('not an error')).toBe(false);
});
