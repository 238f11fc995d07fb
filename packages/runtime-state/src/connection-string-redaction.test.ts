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
      // Exactly the characters holding a bit of the secret go (character `j` holds bits 6j to 6j + 5),
      // and the padding after them: those holding only the bytes around it stay.
      const first = Math.floor((prefix.length * 8) / 6);
      const last = Math.ceil(((prefix.length + secret.length) * 8) / 6);
      const kept =
        last === Math.ceil(((2 * prefix.length + secret.length) * 8) / 6) ? '' : encoded.slice(last);
      expect(redactSecrets({ header: `payload ${encoded}` }), prefix).toEqual({
        header: `payload ${encoded.slice(0, first)}[REDACTED]${kept}`,
      });
    }
  });

  it('keeps a JSON document an answer holds valid around a base64 form in it', () => {
    // The `n` of a `\n` before the base64 text was taken with it: `line one\[REDACTED]`, which no JSON
    // parser reads.
    const secret = password();
    registerSecretValue(secret);
    const encoded = Buffer.from(`app:${secret}`).toString('base64');
    const stored = redactSecrets({ output: JSON.stringify({ content: `line one\n${encoded}\nline three` }) });
    expect(JSON.parse(stored.output)).toEqual({
      content: `line one\n${encoded.slice(0, 5)}[REDACTED]\nline three`,
    });
  });
});
