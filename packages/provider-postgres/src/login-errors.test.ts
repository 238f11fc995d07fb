import { expect, it } from 'vitest';
import { toCrewlineError } from './errors.js';

/** An error as pg raises it for a refused login: the server's message and its SQLSTATE. */
function serverError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}

const location = 'postgres://nobodyhere@db.internal:5432/agents?schema=crewline';

// A login as a role the server does not know was told to set PGPASSWORD: no password makes a role.
it('a role that does not exist is named, with how to create it, not a password hint', () => {
  const error = toCrewlineError(serverError('28000', 'role "nobodyhere" does not exist'), 'read', location);
  expect(error.code).toBe('invalid_config');
  expect(error.message).toContain('has no role "nobodyhere"');
  expect(error.message).toContain('createuser');
  expect(error.message).not.toContain('PGPASSWORD');
});

// A wrong password was told to put a password in the URL or PGPASSWORD, as if none had been given.
it('a wrong password says the server refused it and to check it, not to put one in', () => {
  const error = toCrewlineError(
    serverError('28P01', 'password authentication failed for user "app"'),
    'read',
    location,
  );
  expect(error.message).toContain('refused the password');
  expect(error.message).toContain('check it');
  expect(error.message).toContain('PGPASSWORD');
  expect(error.message).not.toContain('put the password');
});
