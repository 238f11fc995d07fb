import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerEnvironmentSecrets } from './environment-credentials.js';
import { keepNamesFromValueRedaction } from './kept-names.js';
import { redactSecretsInText } from './secret-patterns.js';
import { registerSecretValue, registerSecretValues } from './secret-registration.js';

/** A credential of no known shape: only its exact value can give it away. */
function shapeless(prefix = 'zq'): string {
  return `${prefix}${randomBytes(12).toString('hex')}`;
}

const planted: string[] = [];

function plantEnvironment(name: string, value: string): void {
  planted.push(name);
  process.env[name] = value;
}

afterEach(() => {
  for (const name of planted.splice(0)) delete process.env[name];
});

describe('redaction by value', () => {
  it('scrubs every credential-named variable of the environment, whatever its shape', () => {
    const compatible = shapeless();
    const token = shapeless();
    const password = shapeless();
    plantEnvironment('OPENAI_COMPATIBLE_API_KEY', compatible);
    plantEnvironment('CREWLINE_TEST_SERVICE_TOKEN', token);
    plantEnvironment('CREWLINE_TEST_DB_PASSWORD', password);
    registerEnvironmentSecrets();
    const text = `server said: invalid key ${compatible}; also ${token}/${password}`;
    const redacted = redactSecretsInText(text);
    for (const value of [compatible, token, password]) expect(redacted).not.toContain(value);
    expect(redacted).toBe('server said: invalid key [REDACTED]; also [REDACTED]/[REDACTED]');
  });

  it('reads the environment lazily: a value set before the first scrub needs no call', async () => {
    const value = shapeless();
    plantEnvironment('CREWLINE_TEST_LAZY_SECRET', value);
    // A fresh registry, as a new process has: the module is loaded again under another URL and the
    // global registry slot is emptied for the duration of the test.
    const slot = Symbol.for('crewline.redaction');
    const holder = globalThis as Record<symbol, unknown>;
    const saved = holder[slot];
    delete holder[slot];
    try {
      vi.resetModules();
      const fresh = await import('./secret-patterns.js');
      expect(fresh.redactSecretsInText(`echo ${value}`)).toBe('echo [REDACTED]');
    } finally {
      holder[slot] = saved;
    }
  });

  it('takes the password of any URL in the environment, and the whole value of a DSN', () => {
    const password = shapeless();
    const dsn = `https://${shapeless()}@o1.ingest.example.io/42`;
    plantEnvironment('CREWLINE_TEST_DATABASE_URL', `postgres://app:${password}@db.internal:5432/app`);
    plantEnvironment('CREWLINE_TEST_SENTRY_DSN', dsn);
    registerEnvironmentSecrets();
    expect(redactSecretsInText(`auth failed for ${password}`)).toBe('auth failed for [REDACTED]');
    expect(redactSecretsInText(`report to ${dsn}`)).toBe('report to [REDACTED]');
  });

  it('ignores short, boolean and numeric values and names that do not hold a credential', () => {
    const innocent = {
      CREWLINE_TEST_API_KEY: 'short',
      CREWLINE_TEST_AUTH_TOKEN: 'true',
      CREWLINE_TEST_MAX_TOKENS: '409600000',
      CREWLINE_TEST_AUTH_METHOD: 'password-and-otp',
      CREWLINE_TEST_AUTH_SOCK: '/tmp/ssh-agent.sock',
      PWD: '/home/someone/project',
      OLDPWD: '/home/someone/elsewhere',
      CREWLINE_TEST_BASE_URL: 'http://localhost:11434/v1',
    };
    registerEnvironmentSecrets(innocent);
    const text = `short true 409600000 password-and-otp /tmp/ssh-agent.sock /home/someone/project /home/someone/elsewhere http://localhost:11434/v1`;
    expect(redactSecretsInText(text)).toBe(text);
  });

  it('also scrubs the URL-encoded and base64 forms of a registered value', () => {
    const value = `${shapeless()}/+=&?`;
    registerSecretValue(value);
    expect(redactSecretsInText(`q=${encodeURIComponent(value)}`)).toBe('q=[REDACTED]');
    // Inside a longer base64 text (HTTP Basic credentials) the value may start at any byte offset.
    for (const prefix of ['', 'u:', 'us:', 'user:']) {
      const basic = Buffer.from(`${prefix}${value}`).toString('base64');
      const start = Math.ceil((prefix.length + 2) / 3) * 4;
      const redacted = redactSecretsInText(`credentials ${basic}`);
      expect(redacted, prefix).toContain('[REDACTED]');
      expect(redacted, prefix).not.toContain(basic.slice(start, start + 16));
    }
  });

  it('prefers the longest value when one registered value contains another', () => {
    const inner = shapeless();
    const outer = `${inner}${shapeless()}`;
    registerSecretValues([inner, outer]);
    expect(redactSecretsInText(`a ${outer} b ${inner} c`)).toBe('a [REDACTED] b [REDACTED] c');
  });

  it('finds a value at any offset in a text, at its shortest length, and overlapping another', () => {
    const short = `s${randomBytes(4).toString('hex').slice(0, 7)}`;
    const long = shapeless();
    registerSecretValues([short, long]);
    expect(short).toHaveLength(8);
    for (let offset = 0; offset < 9; offset += 1) {
      const padding = 'x'.repeat(offset);
      expect(redactSecretsInText(`${padding}${short}`), `offset ${offset}`).toBe(`${padding}[REDACTED]`);
      expect(redactSecretsInText(`${padding} ${long}!`), `offset ${offset}`).toBe(`${padding} [REDACTED]!`);
    }
    // The end of one value that is the start of another: nothing of either is left.
    const shared = randomBytes(6).toString('hex');
    const first = `f${randomBytes(6).toString('hex')}${shared}`;
    const second = `${shared}${randomBytes(6).toString('hex')}s`;
    registerSecretValues([first, second]);
    expect(redactSecretsInText(`<${first}${second.slice(shared.length)}>`)).toBe('<[REDACTED]>');
  });

  it('ignores too short and non-secret values given to registerSecretValue', () => {
    registerSecretValues(['ollama', 'false', '12345678901', undefined, null, '']);
    const text = 'ollama false 12345678901';
    expect(redactSecretsInText(text)).toBe(text);
  });

  it('leaves a value inside a kept name (a stored model id) and redacts it elsewhere', () => {
    const value = shapeless();
    registerSecretValue(value);
    const modelId = `${value}-instruct`;
    expect(redactSecretsInText(`lm:${modelId}`)).toBe('lm:[REDACTED]-instruct');
    keepNamesFromValueRedaction([modelId, 'short']);
    expect(redactSecretsInText(`lm:${modelId}, key ${value}; lm:${modelId}`)).toBe(
      `lm:${modelId}, key [REDACTED]; lm:${modelId}`,
    );
    expect(redactSecretsInText(`${value}-instructed`)).toBe(`${modelId}ed`);
    expect(redactSecretsInText(`${value}-instruc`)).toBe('[REDACTED]-instruc');
  });

  it('keeps a longer name holding a registered value, not a name that is the value itself', () => {
    // A provider `my-gateway-01` whose key is `my-gateway-01`: the model ids it stores stay whole
    // (`my-gateway-01:qwen`), and the key alone is still redacted (review of d49b438: a kept name equal
    // to the key left the key unredacted everywhere).
    const key = shapeless();
    registerEnvironmentSecrets({ CUSTOM_API_KEY: key });
    keepNamesFromValueRedaction([key, `${key}:qwen`]);
    expect(redactSecretsInText(`model ${key}:qwen, key ${key}`)).toBe(`model ${key}:qwen, key [REDACTED]`);
    // Whichever comes first.
    const later = shapeless();
    keepNamesFromValueRedaction([`${later}:qwen`]);
    registerSecretValue(later);
    expect(redactSecretsInText(`model ${later}:qwen; ${later}`)).toBe(`model ${later}:qwen; [REDACTED]`);
    // A value merely inside a kept name is still redacted elsewhere.
    const inner = shapeless();
    registerSecretValue(inner);
    keepNamesFromValueRedaction([`${inner}-instruct`]);
    expect(redactSecretsInText(`${inner}-instruct ${inner}`)).toBe(`${inner}-instruct [REDACTED]`);
  });

  it('keeps one registry per process, on a global symbol, shared by every copy of the package', async () => {
    const value = shapeless();
    vi.resetModules();
    const copy = await import('./secret-registration.js');
    expect(copy.registerSecretValue).not.toBe(registerSecretValue);
    copy.registerSecretValue(value);
    expect(redactSecretsInText(`from another copy: ${value}`)).toBe('from another copy: [REDACTED]');
  });
});
