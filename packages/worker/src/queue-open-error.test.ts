import { expect, it } from 'vitest';
import type { QueueLocation } from './connection.js';
import { queueOpenError } from './queue-open-error.js';

const location: QueueLocation = {
  connectionString: 'postgres://nobodyhere@db.internal:5432/agents',
  checkpointLocation: 'postgres://nobodyhere@db.internal:5432/agents',
  schema: 'crewline',
  queueSchema: 'crewline_queue',
  display: 'postgres://nobodyhere@db.internal:5432/agents',
};

/** An error as pg raises it for a refused login: the server's message and its SQLSTATE. */
function serverError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, severity: 'FATAL' });
}

// A login as a role the server does not know was told to set PGPASSWORD: no password makes a role.
it('a role that does not exist is named, with how to fix it, not a password hint', () => {
  const error = queueOpenError(location, serverError('28000', 'role "nobodyhere" does not exist'));
  expect(error.code).toBe('invalid_config');
  expect(error.message).toContain('has no role "nobodyhere"');
  expect(error.message).toContain('createuser nobodyhere');
  expect(error.message).not.toContain('PGPASSWORD');
});

// A wrong password was told to put a password in the URL or PGPASSWORD, as if none had been given.
it('a wrong password says the server refused it and to check it, not to put one in', () => {
  const error = queueOpenError(
    location,
    serverError('28P01', 'password authentication failed for user "app"'),
  );
  expect(error.message).toContain('refused the password');
  expect(error.message).toContain('check it');
  expect(error.message).toContain('PGPASSWORD');
  expect(error.message).not.toContain('put the password');
});

// Trial (deploy): a missing database was a failed write (exit 1) with no way out.
it('a database that does not exist is a configuration error saying to create it', () => {
  const error = queueOpenError(location, serverError('3D000', 'database "agents" does not exist'));
  expect(error.code).toBe('invalid_config');
  expect(error.message).toContain(
    'the database of the run queue postgres://nobodyhere@db.internal:5432/agents does not exist',
  );
  expect(error.message).toContain('createdb');
  // The CLI's "does not exist" (exit 3), as for a checkpoint location whose database is missing.
  expect(error.details?.missingDatabase).toBe(true);
});
