import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { addRedaction } from './add-redaction.js';
import { credentialsOfEnvironment, registerEnvironmentSecrets } from './environment-credentials.js';
import { type LogRecord, setLogLevel, setLogSink } from './logger.js';
import { redactSecretsInText } from './secret-patterns.js';
import { registerSecretValues } from './secret-registration.js';
import { commonPasswordRefusal, secretShapeRefusal } from './secret-shape.js';

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

  it('refuses a well-known default or dictionary password found in an address, that word exactly', () => {
    for (const value of [
      'password',
      'PASSWORD',
      'passw0rd',
      'P@ssw0rd',
      'changeme',
      'changeit',
      'administrator',
    ])
      expect(commonPasswordRefusal(value), value).toMatch(/default or dictionary password/);
    // A word with more to it is a password like any other (review RI-1: `Admin2024!`, `secret123` are
    // what real credentials look like; b54def8 refused them everywhere and they were written in clear).
    for (const value of [
      'Password1',
      'Admin2024!',
      'secret123',
      'test1234',
      'changeme-k7Qz',
      'welcome-to-the-jungle',
    ])
      expect(commonPasswordRefusal(value), value).toBeUndefined();
    // The shape rule of every credential (a name's value, the environment, registerSecretValues) does not
    // look at the list: a value given as a credential is redacted whatever word it is.
    for (const value of ['password', 'Password123!', 'Admin2024!', 'secret123'])
      expect(secretShapeRefusal(value), value).toBeUndefined();
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

  it('never registers the word crewline by value: every message, prefix and command hint holds it', () => {
    expect(secretShapeRefusal('crewline')).toMatch(/crewline/);
    expect(secretShapeRefusal('Crewline')).toBeDefined();
    registerEnvironmentSecrets({ CREWLINE_TEST_WORD_PGPASSWORD: 'crewline' });
    const text =
      'crewline: cannot reach the Postgres server of postgres://crewline@127.0.0.1:1/crewline?schema=crewline; run pnpm crewline checkpoint resume deadbeef';
    expect(redactSecretsInText(text)).toBe(text);
    // Under its name and in an assignment it is still redacted.
    expect(redactSecretsInText('PGPASSWORD=crewline')).toBe('PGPASSWORD=[REDACTED]');
  });

  it('leaves out a credential equal to a user name, database name or scheme of the environment', () => {
    const records: LogRecord[] = [];
    const previous = setLogSink((record) => records.push(record));
    setLogLevel('debug');
    try {
      registerEnvironmentSecrets({
        PGUSER: 'pguserword',
        CREWLINE_TEST_A_PGPASSWORD: 'pguserword',
        PGDATABASE: 'pgdatabaseword',
        CREWLINE_TEST_B_PASSWORD: 'pgdatabaseword',
        CREWLINE_TEST_LOCATION: 'postgres://urluserword@db:5432/urldatabaseword',
        CREWLINE_TEST_E_PASSWORD: 'urluserword',
        CREWLINE_TEST_F_PASSWORD: 'urldatabaseword',
        // A URL password equal to another URL's database name.
        CREWLINE_TEST_REPORTS_URL: 'mysql://reader:urldatabaseword@db/reports',
      });
      const text =
        'pguserword pgdatabaseword urluserword urldatabaseword in postgres://urluserword@db/urldatabaseword';
      expect(redactSecretsInText(text)).toBe(text);
      const said = records.filter((record) => record.message.includes('CREWLINE_TEST_A_PGPASSWORD'));
      expect(said).toHaveLength(1);
      expect(said[0]!.message).toMatch(/user name, database name or scheme/);
      expect(said[0]!.message).not.toContain('pguserword');
    } finally {
      setLogSink(previous);
      setLogLevel('warn');
    }
  });
});

describe('a token equal to USER or LOGNAME', () => {
  // Review of 029ad3f: USER and LOGNAME made structure words, which a token may equal.
  it('is redacted by value', () => {
    expect(
      credentialsOfEnvironment({ USER: 'Tk93xQ7mLp2Zr', CREWLINE_TEST_SERVICE_TOKEN: 'Tk93xQ7mLp2Zr' }),
    ).toContain('Tk93xQ7mLp2Zr');
  });
});

describe('tokens in the user or path of an address that is not a database', () => {
  // Review of 029ad3f: a token used as a git remote's user, or as a webhook's first path segment,
  // became a "structure word", and the variable holding it was no longer redacted by value.
  it('are still redacted by value where a credential variable holds them', () => {
    const environment = {
      CREWLINE_TEST_GIT_REMOTE: 'https://Tk9xQ2mLp7Zr4Vb@github.com/org/repo.git',
      CREWLINE_TEST_GIT_TOKEN: 'Tk9xQ2mLp7Zr4Vb',
      CREWLINE_TEST_HOOK_URL: 'https://hooks.example.com/Hk3wP8sNq1Xy6Jt/notify',
      CREWLINE_TEST_HOOK_SECRET: 'Hk3wP8sNq1Xy6Jt',
    };
    expect(credentialsOfEnvironment(environment)).toEqual(
      expect.arrayContaining(['Tk9xQ2mLp7Zr4Vb', 'Hk3wP8sNq1Xy6Jt']),
    );
  });
});

describe('URL passwords of the environment, in every form', () => {
  it('takes a password from ?password=, jdbc: user-info and jdbc: query forms', () => {
    const cases: [string, string][] = [
      ['postgres://db:5432/app?password=qP9xLm2vTz', 'qP9xLm2vTz'],
      ['postgres://db:5432/app?sslmode=require&user=app&password=qP9xLm2vTy', 'qP9xLm2vTy'],
      ['jdbc:postgresql://db/app?user=svc&password=jdbcS3cret98', 'jdbcS3cret98'],
      ['jdbc:mysql://svc:jdbcS3cret99@db/app', 'jdbcS3cret99'],
      ['jdbc:postgresql://db/app?user=svc&password=p%40ss-w0rd-x', 'p@ss-w0rd-x'],
    ];
    for (const [value, password] of cases) {
      expect(credentialsOfEnvironment({ CREWLINE_WORKER_LOCATION: value }), value).toContain(password);
      registerEnvironmentSecrets({ CREWLINE_TEST_URL_FORM: value });
      expect(redactSecretsInText(`tool said ${password}`), value).toBe('tool said [REDACTED]');
    }
  });

  it('leaves out such a password when it is a user name, database name or scheme', () => {
    for (const value of [
      'jdbc:postgresql://db/warehouse?user=warehouse&password=warehouse',
      'jdbc:mysql://analytics:analytics@db/app',
      'postgres://db/app?user=reporting&password=reporting',
    ])
      expect(credentialsOfEnvironment({ CREWLINE_WORKER_LOCATION: value }), value).toEqual([]);
  });
});
