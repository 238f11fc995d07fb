import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { registerAddressPasswords, registerEnvironmentSecrets } from './environment-credentials.js';
import { type LogRecord, setLogLevel, setLogSink } from './logger.js';
import { redactionGeneration } from './redaction-registry.js';
import { redactSecretsInText } from './secret-patterns.js';
import { registerSecretValues } from './secret-registration.js';

// Random, so that no other test (the registry is process-wide) registered it first.
const password = () => `pw${randomBytes(6).toString('hex')}`;

describe('registerAddressPasswords', () => {
  it('registers the passwords of addresses whatever they are named, as the server reads them too', () => {
    const userInfo = password();
    const query = password();
    const property = password();
    const oracle = password();
    const encoded = `${password()}/@1`;
    registerAddressPasswords([
      { source: 'test "db"', value: `postgres://admin:${userInfo}@db.internal:5432/app` },
      { source: 'test "queue"', value: `postgres://db:5432/app?password=${query}` },
      { source: 'test "mssql"', value: `jdbc:sqlserver://db:1433;user=app;password={${property}}` },
      { source: 'test "oracle"', value: `jdbc:oracle:thin:app/${oracle}@db:1521/svc` },
      { source: 'test "cache"', value: `redis://default:${encodeURIComponent(encoded)}@cache:6379` },
    ]);
    for (const each of [userInfo, query, property, oracle, encoded])
      expect(redactSecretsInText(`the answer quotes ${each} bare`), each).toBe(
        'the answer quotes [REDACTED] bare',
      );
  });

  it('ignores values that are no address, and passwords already redacted', () => {
    const generation = redactionGeneration();
    registerAddressPasswords([
      { source: 'test "topic"', value: 'Research AI agents' },
      { source: 'test "note"', value: `the password is ${password()}` },
      { source: 'test "docs"', value: 'https://example.com/docs?page=2' },
      { source: 'test "restored"', value: 'postgres://admin:[REDACTED]@db/app' },
      { source: 'test "encoded"', value: 'postgres://admin:%5BREDACTED%5D@db/app' },
    ]);
    expect(redactionGeneration()).toBe(generation);
  });

  it('leaves out, as for the environment, a password that is a placeholder, too short, or a word of these addresses', () => {
    const records: LogRecord[] = [];
    const previous = setLogSink((record) => records.push(record));
    setLogLevel('debug');
    try {
      const generation = redactionGeneration();
      registerAddressPasswords([
        { source: 'test "placeholder"', value: 'postgres://app:postgres@db/app' },
        { source: 'test "short"', value: 'postgres://app:s3cr3t@db/app' },
        { source: 'test "user"', value: 'postgres://analyticsuser:analyticsuser@db/app' },
        { source: 'test "database"', value: 'mysql://etl:warehousedb@db/warehousedb' },
        // Equal to the database of another address given with it.
        { source: 'test "reports"', value: 'mysql://reader:reportingdb@db/app' },
        { source: 'test "reporting"', value: 'postgres://writer@db/reportingdb' },
      ]);
      expect(redactionGeneration()).toBe(generation);
      const text = 'postgres s3cr3t analyticsuser warehousedb reportingdb';
      expect(redactSecretsInText(text)).toBe(text);
      const said = records.filter((record) => record.message.includes('test "user"'));
      expect(said).toHaveLength(1);
      expect(said[0]!.message).toMatch(/user name, database name or scheme of an address given with it/);
      expect(said[0]!.message).not.toContain('analyticsuser');
      expect(records.some((record) => record.message.includes('test "placeholder"'))).toBe(true);
    } finally {
      setLogSink(previous);
      setLogLevel('warn');
    }
  });

  // Review RF-1 of f6dcd4e: 'password' registered from `db: 'postgres://app:password@…'` rewrote every
  // text of the process (`Rotate [REDACTED]s`) and a tool `check_password_policy`.
  // Review RI-1 of b54def8: a common word with digits or marks (what real credentials look like) was
  // refused everywhere and written in clear where a prompt or an answer quoted it.
  it('redacts a common word with more to it, under a credential name, in an address and registered in code', () => {
    registerEnvironmentSecrets({ CREWLINE_TEST_RI_ADMIN_PASSWORD: 'Admin2024!' });
    registerAddressPasswords([{ source: 'test "address"', value: 'postgres://app:Password2024!@db/app' }]);
    registerSecretValues(['Qwerty12345!'], 'test "code"');
    const said = redactSecretsInText('keys: Admin2024! then Password2024! then Qwerty12345!');
    expect(said).not.toContain('Admin2024');
    expect(said).not.toContain('Password2024');
    expect(said).not.toContain('Qwerty12345');
  });

  it('leaves out a well-known default or dictionary password, from an input and from the environment', () => {
    const records: LogRecord[] = [];
    const previous = setLogSink((record) => records.push(record));
    setLogLevel('debug');
    try {
      const generation = redactionGeneration();
      registerAddressPasswords([
        { source: 'test "dictionary"', value: 'postgres://app:password@localhost:5432/app' },
        { source: 'test "digits"', value: 'mysql://app:passw0rd@db/app' },
        { source: 'test "jdbc"', value: 'jdbc:postgresql://db/app?user=app&password=changeme' },
      ]);
      registerEnvironmentSecrets({
        CREWLINE_TEST_COMMON_DATABASE_URL: 'postgres://app:administrator@db/app',
      });
      expect(redactionGeneration()).toBe(generation);
      const text = 'Rotate passwords; the password, changeme and administrator defaults are refused.';
      expect(redactSecretsInText(text)).toBe(text);
      // Inside its address it is still redacted.
      expect(redactSecretsInText('postgres://app:password@localhost:5432/app')).not.toContain(':password@');
      const said = records.find((record) => record.message.includes('test "dictionary"'));
      expect(said?.message).toMatch(/well-known default or dictionary password/);
    } finally {
      setLogSink(previous);
      setLogLevel('warn');
    }
  });
});
