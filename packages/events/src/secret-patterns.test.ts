import { describe, expect, it } from 'vitest';
import { redactSecretsInText } from './secret-patterns.js';

describe('secret patterns', () => {
  it('redacts known API key shapes inside text', () => {
    const openai = `sk-proj-${'a1B2'.repeat(12)}`;
    const anthropic = `sk-ant-api03-${'x9'.repeat(20)}`;
    const text = `use ${openai} or ${anthropic} with Bearer abcdefghijklmnopqrstuvwxyz and postgres://user:hunter2pass@db/x`;
    const redacted = redactSecretsInText(text);
    expect(redacted).not.toContain(openai);
    expect(redacted).not.toContain(anthropic);
    expect(redacted).not.toContain('abcdefghijklmnopqrstuvwxyz');
    expect(redacted).not.toContain('hunter2pass');
    expect(redacted).toContain('postgres://user:[REDACTED]@db/x');
  });

  it('redacts a shape only where it starts a word, and finds one that starts inside a word it passed over', () => {
    const aws = `AKIA${'ABCDEFGH23456789'}`;
    const hugging = `hf_${'d4'.repeat(12)}`;
    expect(redactSecretsInText(`id x${aws} end`)).toBe(`id x${aws} end`);
    expect(redactSecretsInText(`id -${aws} end`)).toBe('id -[REDACTED] end');
    expect(redactSecretsInText(`${aws} end`)).toBe('[REDACTED] end');
    // The OpenAI shape matches from "sk" on but starts inside "xsk": the Hugging Face token after it
    // starts a word of its own.
    expect(redactSecretsInText(`key xsk-proj-${hugging} end`)).toBe('key xsk-proj-[REDACTED] end');
    expect(redactSecretsInText(`a Bearer ${'t'.repeat(20)} and xBearer ${'u'.repeat(20)}`)).toBe(
      `a [REDACTED] and xBearer ${'u'.repeat(20)}`,
    );
  });

  it('leaves ordinary text alone', () => {
    const text = 'The skeleton key to AI trends: tokens, tasks and a sk- prefix alone.';
    expect(redactSecretsInText(text)).toBe(text);
  });
});

describe('more credential shapes', () => {
  it('redacts Stripe, GitLab, npm, PEM private keys and AWS secrets', () => {
    const samples = [
      `sk_live_${'a'.repeat(24)}`,
      `glpat-${'b'.repeat(20)}`,
      `npm_${'c'.repeat(36)}`,
      '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----',
    ];
    for (const sample of samples)
      expect(redactSecretsInText(`value: ${sample} end`), sample).not.toContain(sample);
    expect(redactSecretsInText(`aws_secret_access_key = ${'D'.repeat(40)}`)).not.toContain('D'.repeat(40));
  });
});

describe('credentials written as text', () => {
  // [text, the credential that must go, what must stay]
  const leaky: [string, string, string][] = [
    ['api_key=abc123def456', 'abc123def456', 'api_key='],
    ['curl "https://api.example.com/v1?api_key=Zx81Qw02Lm&format=json"', 'Zx81Qw02Lm', '&format=json'],
    ['GET /search?q=cats&key=AbC123xYz789 HTTP/1.1', 'AbC123xYz789', '/search?q=cats&key='],
    ['https://db.example.com/connect?user=bob&password=hunter22&ssl=true', 'hunter22', '&ssl=true'],
    ['OPENAI_API_KEY=q8w7e6r5t4y3u2i1', 'q8w7e6r5t4y3u2i1', 'OPENAI_API_KEY='],
    ['export GITHUB_TOKEN="tok4927abcXYZ"', 'tok4927abcXYZ', 'export GITHUB_TOKEN='],
    ['token: 7f3a9c2e1b8d', '7f3a9c2e1b8d', 'token: '],
    ['password: hunter2', 'hunter2', 'password: '],
    ['  client_secret: "s3cr3t-Value"', 's3cr3t-Value', 'client_secret'],
    ['Authorization: Bearer abc123xyz', 'abc123xyz', 'Authorization: Bearer '],
    ['authorization: Basic dXNlcjpwYXNz', 'dXNlcjpwYXNz', 'authorization: Basic '],
    ['X-Api-Key: 0a1b2c3d4e5f', '0a1b2c3d4e5f', 'X-Api-Key: '],
    ['The tool returned {"api_key": "abc123def456", "status": "ok"}', 'abc123def456', '"status": "ok"'],
    [
      "config = {'secretAccessKey': 'wJalrXUtnFEMIK7MDENG', 'region': 'eu-west-1'}",
      'wJalrXUtnFEMIK7MDENG',
      "'region': 'eu-west-1'",
    ],
    ['{"connectionString":"Server=db;Password=pa55word;"}', 'pa55word', '"connectionString"'],
    ['Your API key: ZZtop9988xx was created.', 'ZZtop9988xx', 'was created.'],
    [
      'aws_secret_access_key = wJalrXUtnFEMIbPxRfiCYEXAMPLEKEY',
      'wJalrXUtnFEMIbPxRfiCYEXAMPLEKEY',
      'aws_secret_access_key = ',
    ],
    ['postgres://app:Secr3tPass@db.internal:5432/app', 'Secr3tPass', 'db.internal:5432/app'],
    ['Cookie: session=abc123def; theme=dark', 'session=abc123def', 'theme=dark'],
  ];

  it.each(leaky)('redacts the value in %s', (text, credential, kept) => {
    const redacted = redactSecretsInText(text);
    expect(redacted).not.toContain(credential);
    expect(redacted).toContain(kept);
    expect(redacted).toContain('[REDACTED]');
    expect(redactSecretsInText(redacted), 'redacting twice changes nothing').toBe(redacted);
  });

  const innocent = [
    'We are close to the token budget for this quarter.',
    'Click the password reset link in the email we sent you.',
    'Our API key rotation policy: every key is replaced after 90 days.',
    'const tokens = tokenize(text);\nconst count = tokens.length;',
    'tokens=tokenize(text)',
    'const token = await getToken(user);',
    'if (token === null || key == undefined) return;',
    'apiKey: process.env.OPENAI_API_KEY,',
    'Authorization: Bearer <your token>',
    'token: the smallest unit of text a model reads',
    'Note: the monkey keyword is passed to the primaryKey column.',
    '## Keys\n\n| key | meaning |\n|---|---|\n| `maxTokens` | 4096 |',
    '{"inputTokens": 1200, "outputTokens": 310, "totalTokens": 1510}',
    '{"role": "assistant", "content": "The author: Jane Doe (2021)."}',
    'Session: 2 of 3. Keynote: AI agents at scale.',
    'See https://example.com/docs?page=2&lang=en and http://localhost:11434/v1 for details.',
    'std::string key = map::key_type();',
    'password: see the vault',
    'The password must be at least 12 characters long.',
    '**Token:** a piece of a word',
  ];

  it.each(innocent)('leaves innocent text alone: %s', (text) => {
    expect(redactSecretsInText(text)).toBe(text);
  });
});

describe('long texts scanned once', () => {
  it('scans a long text again once a secret is registered after it was first seen', async () => {
    const { registerSecretValue } = await import('./secret-registration.js');
    const { addRedaction } = await import('./add-redaction.js');
    const value = `cached-${Math.random().toString(36).slice(2)}-credential-value`;
    const text = `${'a long note that a run checkpoints many times. '.repeat(4)}It holds ${value} and employee 4711-AX-99.`;
    expect(redactSecretsInText(text)).toBe(text);
    expect(redactSecretsInText(`${text}`)).toBe(text); // the cached answer, same content
    registerSecretValue(value);
    expect(redactSecretsInText(text)).not.toContain(value);
    addRedaction({ patterns: [/\d{4}-AX-\d{2}/g] });
    expect(redactSecretsInText(text)).not.toContain('4711-AX-99');
    expect(redactSecretsInText(text)).not.toContain(value);
  });

  it('scans a short string once too, however many checkpoints hold it', async () => {
    const { redactionRegistry } = await import('./redaction-registry.js');
    const { addRedaction } = await import('./add-redaction.js');
    // A new generation empties the cache; then a pattern that counts the scans it takes part in.
    addRedaction({ patterns: [/never-in-this-test-\d{9}/g] });
    let scans = 0;
    const counting = /never-matches-\d{12}/g;
    const replace = RegExp.prototype[Symbol.replace] as (
      this: RegExp,
      text: string,
      replacement: string,
    ) => string;
    Object.defineProperty(counting, Symbol.replace, {
      value(this: RegExp, text: string, replacement: string): string {
        scans += 1;
        return replace.call(this, text, replacement);
      },
    });
    const patterns = redactionRegistry().patterns;
    patterns.push(counting);
    try {
      for (const text of ['sequential', 'completed', 'cea3d80a-5adb-4226-95cf-0bd9df3c1c2f'])
        for (let checkpoint = 0; checkpoint < 3; checkpoint += 1)
          expect(redactSecretsInText(text)).toBe(text);
      expect(scans).toBe(3);
    } finally {
      patterns.pop();
    }
  });

  it('redacts a long text with a key the same way every time it is met', () => {
    const key = `sk-proj-${'Zq7'.repeat(10)}`;
    const text = `${'context '.repeat(20)} key ${key}`;
    const first = redactSecretsInText(text);
    expect(first).not.toContain(key);
    expect(redactSecretsInText(text.slice(0))).toBe(first);
  });
});
