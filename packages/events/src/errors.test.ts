import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CrewlineError } from './errors.js';
import { registerSecretValue } from './secret-registration.js';

describe('CrewlineError', () => {
  it('never carries a registered credential in its message or in its causes', () => {
    const key = `k${randomBytes(16).toString('hex')}`;
    registerSecretValue(key);
    // What an HTTP client error looks like when a server echoes the key it was sent.
    const serverError = Object.assign(new Error(`401: invalid api key ${key}`), {
      responseBody: `{"error": {"message": "Incorrect API key provided: ${key}"}}`,
      data: { error: { message: `Incorrect: ${key}`, codes: [`bad ${key}`] } },
      statusCode: 401,
    });
    const error = new CrewlineError('agent-loop', 'model_error', `the call failed: 401 ${key}`, {
      cause: new Error('wrapped', { cause: serverError }),
    });
    expect(error.message).toBe('[agent-loop] the call failed: 401 [REDACTED]');
    expect(serverError.message).toBe('401: invalid api key [REDACTED]');
    expect(serverError.responseBody).not.toContain(key);
    expect(JSON.stringify(serverError.data)).not.toContain(key);
    expect(serverError.stack).not.toContain(key);
    expect(serverError.statusCode).toBe(401);
    expect(error.cause).toBeInstanceOf(Error);
  });
});
