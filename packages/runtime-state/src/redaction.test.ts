import { describe, expect, it } from 'vitest';
import { markRedacted, redactSecrets } from './redaction.js';

describe('redactSecrets', () => {
  const fakeKey = `sk-proj-${'Zq7'.repeat(15)}`;

  it('redacts values under credential keys and key-shaped substrings anywhere', () => {
    const value = {
      llm: { model: 'openai:gpt-4o-mini', apiKey: 'anything-at-all', maxTokens: 100 },
      headers: { Authorization: 'Bearer abc' },
      messages: [{ role: 'user', content: `my key is ${fakeKey}` }],
    };
    const redacted = redactSecrets(value);
    expect(JSON.stringify(redacted)).not.toContain(fakeKey);
    expect(JSON.stringify(redacted)).not.toContain('anything-at-all');
    expect(redacted.llm.maxTokens).toBe(100);
    expect(redacted.llm.model).toBe('openai:gpt-4o-mini');
    expect(redacted.headers.Authorization).toBe('[REDACTED]');
    expect(value.llm.apiKey).toBe('anything-at-all');
  });

  it('returns the same object when nothing needs redacting', () => {
    const value = { a: [1, 'two', { b: null }] };
    expect(redactSecrets(value)).toBe(value);
  });

  it('markRedacted redacts once and lets later calls pass the subtree through, except under a secret key', () => {
    const task = { output: `the key ${fakeKey}`, status: 'completed' };
    const marked = markRedacted(task);
    expect(marked).not.toBe(task);
    expect(marked.output).toBe('the key [REDACTED]');
    const snapshot = { tasks: [marked] };
    expect(redactSecrets(snapshot)).toBe(snapshot);
    expect(redactSecrets(snapshot).tasks[0]).toBe(marked);
    const underSecret = redactSecrets({ apiKey: marked });
    expect(underSecret.apiKey.status).toBe('[REDACTED]');
  });
});
