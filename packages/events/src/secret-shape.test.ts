import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { addRedaction } from './add-redaction.js';
import { type LogRecord, setLogLevel, setLogSink } from './logger.js';
import { redactSecretsInText } from './secret-patterns.js';
import { secretShapeRefusal } from './secret-shape.js';
import { registerEnvironmentSecrets, registerSecretValues } from './secret-values.js';

// Made up, of the shapes providers issue (random parts so that no real key is written down).
const random = (length: number) => randomBytes(length).toString('base64url').slice(0, length);
const keyShaped = [
  `sk-proj-${random(48)}`,
  `sk-ant-api03-${random(40)}`,
  `AIza${random(35)}`,
  `gsk_${random(52)}`,
  `hf_${random(34)}`,
  `eyJhbGciOiJIUzI1NiJ9.${random(30)}.${random(43)}`,
  'correct-horse-battery-staple',
  'kQzRtWbXmPvL',
  'token-abc123',
  // Letters only, and credentials all the same: a Gmail app password (grouped as Google shows it, and
  // not), an upper-case token, a base32 TOTP seed, a passphrase.
  'qwhx kzvb nmtr plsd',
  'qwhxkzvbnmtrplsd',
  'QWHXKZVBNMTRPLSDFG',
  'JBSWYDPEHPKXPQRS',
  'tiger-plum-river',
];

// Placeholders that local servers' docs give as keys, default passwords, fillers.
const placeholders = [
  'lm-studio',
  'LM-Studio',
  'lmstudio', // the AI SDK's LM Studio page: LMSTUDIO_API_KEY for the provider `lmstudio`
  'LMStudio',
  'llamacpp',
  'anything',
  'not-needed',
  'sk-no-key-required',
  'Postgres',
  'postgres',
  'dummy-key',
  'sk-xxxxxxxxxxxxxxxx',
  '********',
  'EMPTY',
  'none',
  'ollama',
];

describe('secretShapeRefusal', () => {
  it('accepts the shapes of real keys and passwords', () => {
    for (const value of keyShaped) expect(secretShapeRefusal(value), value).toBeUndefined();
  });

  it('refuses documented placeholder keys, short values and fillers', () => {
    for (const value of placeholders) expect(secretShapeRefusal(value), value).toBeDefined();
  });
});

describe('registering credential values', () => {
  const planted: string[] = [];
  afterEach(() => {
    for (const name of planted.splice(0)) delete process.env[name];
  });

  it('leaves placeholder keys out: ordinary text that holds them is not rewritten', () => {
    registerSecretValues(placeholders, 'test placeholders');
    const text =
      'Is there anything else? lm-studio:qwen, not-needed, sk-no-key-required, postgres://localhost/app';
    expect(redactSecretsInText(text)).toBe(text);
  });

  it('leaves a default password of the environment out, and says so once at debug level without it', () => {
    const records: LogRecord[] = [];
    const previous = setLogSink((record) => records.push(record));
    setLogLevel('debug');
    try {
      planted.push('CREWLINE_TEST_SHAPE_DATABASE_URL', 'CREWLINE_TEST_SHAPE_PGPASSWORD');
      process.env.CREWLINE_TEST_SHAPE_DATABASE_URL = 'postgres://postgres:postgres@localhost:5432/app';
      process.env.CREWLINE_TEST_SHAPE_PGPASSWORD = 'postgres';
      registerEnvironmentSecrets();
      registerEnvironmentSecrets();
      const text = 'checkpoints in postgres://localhost/app (provider postgres)';
      expect(redactSecretsInText(text)).toBe(text);
      // Under its name the password is still redacted, whatever it is.
      expect(redactSecretsInText('PGPASSWORD=postgres')).not.toContain('postgres');
      const said = records.filter((record) => record.message.includes('CREWLINE_TEST_SHAPE_PGPASSWORD'));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatchObject({ level: 'debug', component: 'redaction' });
      expect(said[0]!.message).toMatch(/is not redacted by value: it is a placeholder key/);
      expect(records.some((record) => record.message.includes('CREWLINE_TEST_SHAPE_DATABASE_URL'))).toBe(
        true,
      );
    } finally {
      setLogSink(previous);
      setLogLevel('warn');
    }
  });

  it('redacts a letter-only credential of the environment by value, also after its assignment', () => {
    registerEnvironmentSecrets({
      CREWLINE_TEST_SMTP_PASSWORD: 'qwhx kzvb nmtr plsd',
      CREWLINE_TEST_MAIL_TOKEN: 'qwhxkzvbnmtrplsd',
    });
    expect(redactSecretsInText('tool said: logged in with qwhx kzvb nmtr plsd ok')).toBe(
      'tool said: logged in with [REDACTED] ok',
    );
    expect(redactSecretsInText('SMTP_PASSWORD=qwhx kzvb nmtr plsd')).not.toMatch(/kzvb|nmtr|plsd/);
    expect(redactSecretsInText('token qwhxkzvbnmtrplsd')).toBe('token [REDACTED]');
  });

  it('leaves out a URL password that is the URL’s user name, database name or scheme', () => {
    registerEnvironmentSecrets({
      CREWLINE_TEST_WAREHOUSE_URL: 'postgres://warehouse:warehouse@localhost:5432/warehouse',
      CREWLINE_TEST_ANALYTICS_URL: 'postgresql://app:postgresql@localhost/app',
      CREWLINE_TEST_REPORTS_URL: 'postgres://app:reporting@localhost/reporting',
    });
    const text = 'warehouse tables, postgresql://localhost/app, reporting schema';
    expect(redactSecretsInText(text)).toBe(text);
    // In the URL itself, the password is still redacted by its pattern.
    expect(redactSecretsInText('postgres://warehouse:warehouse@db/warehouse')).not.toContain(
      'warehouse:warehouse@',
    );
  });

  it('still redacts a key-shaped value of the same variables', () => {
    const password = `pg${randomBytes(9).toString('hex')}`;
    registerEnvironmentSecrets({ DATABASE_URL: `postgres://postgres:${password}@localhost/app` });
    expect(redactSecretsInText(`postgres said ${password}`)).toBe('postgres said [REDACTED]');
  });

  it('leaves to addRedaction a value to redact whatever its shape', () => {
    registerSecretValues(['Dummy-Key']);
    expect(redactSecretsInText('a Dummy-Key here')).toBe('a Dummy-Key here');
    addRedaction({ values: ['Dummy-Key'] });
    expect(redactSecretsInText('a Dummy-Key here')).toBe('a [REDACTED] here');
  });
});
