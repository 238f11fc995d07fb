import { randomBytes } from 'node:crypto';
import { registerEnvironmentSecrets, registerSecretValue } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { redactSecrets } from './redaction.js';

/** A password of no known shape: only the rules for its connection string, or its value, find it. */
function password(): string {
  return `Pw${randomBytes(10).toString('hex')}`;
}

describe('connection strings and base64 forms in what a checkpoint stores', () => {
  it('redacts SQL Server and Oracle JDBC passwords in a flow state and an event message', () => {
    const braced = password();
    const thin = password();
    const service = password();
    const stored = redactSecrets({
      state: {
        notes: `tried jdbc:sqlserver://db:1433;databaseName=app;user=app;password={${braced};x};encrypt=true`,
      },
      events: [
        { type: 'tool_failed', message: `jdbc:oracle:thin:scott/${thin}@db.internal:1521/ORCL refused` },
        { type: 'tool_failed', message: `jdbc:oracle:thin:scott/${service}@//db.internal:1521/sales` },
      ],
    });
    const written = JSON.stringify(stored);
    for (const value of [braced, thin, service]) expect(written).not.toContain(value);
    expect(stored.events[0]!.message).toBe('jdbc:oracle:thin:scott/[REDACTED]@db.internal:1521/ORCL refused');
  });

  it('redacts, alone in an answer, the password of a JDBC address read from the environment', () => {
    const secret = password();
    registerEnvironmentSecrets({
      CREWLINE_TEST_WAREHOUSE: `jdbc:oracle:thin:loader/${secret}@//db.internal:1521/warehouse`,
    });
    expect(redactSecrets({ output: `the password is ${secret}.` })).toEqual({
      output: 'the password is [REDACTED].',
    });
  });

  it('leaves no character of a registered value in its base64 form, whatever its offset', () => {
    const secret = password();
    registerSecretValue(secret);
    for (const prefix of ['', 'a', 'ab']) {
      const encoded = Buffer.from(`${prefix}${secret}${prefix}`).toString('base64');
      expect(redactSecrets({ header: `payload ${encoded}` })).toEqual({ header: 'payload [REDACTED]' });
    }
  });
});
