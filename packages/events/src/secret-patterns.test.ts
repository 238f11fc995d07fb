import { describe, expect, it } from 'vitest';
import { isSecretKey, redactSecretsInText } from './secret-patterns.js';

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

  it('leaves ordinary text alone', () => {
    const text = 'The skeleton key to AI trends: tokens, tasks and a sk- prefix alone.';
    expect(redactSecretsInText(text)).toBe(text);
  });

  it('knows credential-named keys but not counters', () => {
    for (const key of [
      'apiKey',
      'OPENAI_API_KEY',
      'api_key',
      'x-api-key',
      'authorization',
      'password',
      'clientSecret',
      'accessToken',
      'token',
    ]) {
      expect(isSecretKey(key), key).toBe(true);
    }
    for (const key of ['maxTokens', 'inputTokens', 'keyPoints', 'topic', 'monkey', 'tokenUsage']) {
      expect(isSecretKey(key), key).toBe(false);
    }
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

  it('treats auth, pwd, bearer and session ids as credential names', () => {
    for (const key of ['auth', 'pwd', 'bearer', 'sessionId', 'secretKey'])
      expect(isSecretKey(key), key).toBe(true);
    for (const key of ['author', 'authorId', 'session']) expect(isSecretKey(key), key).toBe(false);
  });
});
