import { randomBytes } from 'node:crypto';
import { CrewlineError, redactionGeneration, registerSecretValue } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { type CheckpointConfigInput, parseCheckpointConfig } from './config.js';
import { redactSecrets } from './redaction.js';
import { SettledValues } from './settled-values.js';

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

  it('keeps numbers, booleans and null, under credential names and in arrays, beside strings it redacts', () => {
    const value = {
      settings: { password: 1234, token: true, secret: null, apiKey: 'abc', port: 5432 },
      items: [1, fakeKey, 2, true, null, 'kept', { accessToken: 'gone', count: 3 }, 4],
    };
    expect(redactSecrets(value)).toEqual({
      settings: { password: 1234, token: true, secret: null, apiKey: '[REDACTED]', port: 5432 },
      items: [1, '[REDACTED]', 2, true, null, 'kept', { accessToken: '[REDACTED]', count: 3 }, 4],
    });
  });

  it("keeps numbers, booleans and null beside strings it redacts, with a run's marks too", () => {
    const settled = new SettledValues();
    const value = {
      settings: { password: 1234, token: true, apiKey: 'abc', note: `uses ${fakeKey}` },
      items: [1, fakeKey, null, { accessToken: 'gone', count: 3 }, 4],
    };
    const expected = {
      settings: { password: 1234, token: true, apiKey: '[REDACTED]', note: 'uses [REDACTED]' },
      items: [1, '[REDACTED]', null, { accessToken: '[REDACTED]', count: 3 }, 4],
    };
    expect(redactSecrets(value, settled)).toEqual(expected);
    expect(settled.settle(value)).toEqual(expected);
  });

  it('returns the same object when nothing needs redacting', () => {
    const value = { a: [1, 'two', { b: null }] };
    expect(redactSecrets(value)).toBe(value);
  });

  it('a settled subtree is redacted once and passed through by later calls of its run, except under a secret key', () => {
    const settled = new SettledValues();
    const task = { output: `the key ${fakeKey}`, status: 'completed' };
    const marked = settled.settle(task);
    expect(marked).not.toBe(task);
    expect(marked.output).toBe('the key [REDACTED]');
    expect(settled.settle(task)).toBe(marked);
    expect(settled.settle(marked)).toBe(marked);
    const snapshot = { tasks: [marked] };
    expect(redactSecrets(snapshot, settled)).toBe(snapshot);
    expect(redactSecrets(snapshot, settled).tasks[0]).toBe(marked);
    const underSecret = redactSecrets({ apiKey: marked }, settled);
    expect(underSecret.apiKey.status).toBe('[REDACTED]');
  });

  it('settles per run: another run, and a provider told nothing, see a plain object', () => {
    const run = new SettledValues();
    const other = new SettledValues();
    const task = run.settle({ output: 'done', status: 'completed' });
    expect(run.has(task)).toBe(true);
    expect(other.has(task)).toBe(false);
  });
});

describe('redactSecrets: names by their parts, values, text', () => {
  it('redacts the credential names reported stored verbatim, and keeps counters', () => {
    const names = [
      'secretAccessKey',
      'aws_secret_access_key',
      'accessKey',
      'access_key',
      'accessKeyId',
      'apiKeys',
      'api_keys',
      'subscriptionKey',
      'Ocp-Apim-Subscription-Key',
      'serviceAccountKey',
      'masterKey',
      'tokens',
      'connectionString',
      'passcode',
    ];
    const value = Object.fromEntries(names.map((name, index) => [name, `plain-value-${index}`]));
    const usage = { inputTokens: 12, outputTokens: 3, totalTokens: 15, maxTokens: 100, keyword: 'kept' };
    const redacted = redactSecrets({ ...value, usage, tokensOfWords: ['a'] });
    for (const name of names) expect(redacted[name as keyof typeof redacted], name).toBe('[REDACTED]');
    expect(redacted.usage).toBe(usage);
  });

  it('scrubs a registered value wherever it appears, even in a subtree marked before it was registered', () => {
    const value = `q${randomBytes(16).toString('hex')}`;
    const settled = new SettledValues();
    const task = settled.settle({ output: `the server echoed ${value}`, status: 'completed' });
    expect(task.output).toContain(value);
    registerSecretValue(value);
    const snapshot = redactSecrets({ tasks: [task], note: `again ${value}` }, settled);
    expect(JSON.stringify(snapshot)).not.toContain(value);
    expect(snapshot.tasks[0]!.output).toBe('the server echoed [REDACTED]');
  });

  it('replaces only the value of a credential quoted in a model answer', () => {
    const answer = 'Use this config: {"api_key": "abc123def456", "model": "gpt-4o"}';
    expect(redactSecrets({ content: answer }).content).toBe(
      'Use this config: {"api_key": "[REDACTED]", "model": "gpt-4o"}',
    );
  });
});

describe('the redact checkpoint option', () => {
  it('adds names, patterns and values to redaction when the config is parsed', () => {
    const value = `v${randomBytes(16).toString('hex')}`;
    parseCheckpointConfig({
      location: './somewhere',
      redact: { names: ['patientNumber'], patterns: ['CASE-[0-9]{5}'], values: [value] },
    });
    const redacted = redactSecrets({
      patient_number: 'P-1',
      note: `case CASE-12345 uses ${value}`,
    });
    expect(redacted).toEqual({ patient_number: '[REDACTED]', note: 'case [REDACTED] uses [REDACTED]' });
  });

  it('refuses bad entries with an invalid_config error that names them', () => {
    const message = (redact: unknown) => {
      try {
        parseCheckpointConfig({ redact } as CheckpointConfigInput);
      } catch (error) {
        expect(CrewlineError.hasCode(error, 'invalid_config')).toBe(true);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(message({ values: ['short'] })).toMatch(/redact\.values\.0: .*at least 8 characters/);
    expect(message({ patterns: ['(open'] })).toMatch(/redact\.patterns\.0: .*regular expression/);
    expect(message({ patterns: [/x*/] })).toMatch(/redact\.patterns\.0: .*empty string/);
    expect(message({ names: [''] })).toMatch(/redact\.names\.0: /);
    expect(message({ value: ['x'] })).toMatch(/unknown option "value"/);
  });
});

describe('long arrays of settled items', () => {
  /** SettledValues that counts the lookups redaction makes. */
  class CountingMarks extends SettledValues {
    lookups = 0;
    override scannedUnder(value: object): number | undefined {
      this.lookups += 1;
      return super.scannedUnder(value);
    }
  }

  it('compares a new array with the last one that started alike instead of looking each settled item up', () => {
    const marks = new CountingMarks();
    const tasks = Array.from({ length: 100 }, (_, index) =>
      marks.settle({ index, output: `output ${index}` }),
    );
    redactSecrets({ tasks: [...tasks] }, marks);
    marks.lookups = 0;
    // The next snapshot: a new array, the same settled tasks, one task in progress at the end.
    const running = { index: 100, output: `key sk-proj-${'Ab3'.repeat(8)}` };
    const next = redactSecrets({ tasks: [...tasks, running] }, marks);
    expect(marks.lookups).toBeLessThan(10);
    expect(next.tasks.slice(0, 100)).toEqual(tasks);
    for (const [index, task] of tasks.entries()) expect(next.tasks[index]).toBe(task);
    expect(next.tasks[100]!.output).toBe('key [REDACTED]');
  });

  it("keeps the list of settled items it remembered while a running crew's list holds the same ones", () => {
    const marks = new SettledValues();
    const tasks = Array.from({ length: 20 }, (_, index) =>
      marks.settle({ index, output: `output ${index}` }),
    );
    const running = { index: 20, output: 'under way' };
    const known = () => marks.settledItemsLike(tasks, redactionGeneration());
    redactSecrets({ tasks: [...tasks, running] }, marks);
    const remembered = known();
    expect(remembered?.slice(0, 20)).toEqual(tasks);
    expect(remembered?.[20]).toBeUndefined();
    // Snapshot after snapshot the same settled tasks and one under way: nothing new to remember.
    redactSecrets({ tasks: [...tasks, { ...running, output: 'further' }] }, marks);
    expect(known()).toBe(remembered);
    // The task under way completes and is settled: the list remembered has it from then on.
    const completed = marks.settle({ index: 20, output: 'done' });
    const next = redactSecrets({ tasks: [...tasks, completed] }, marks);
    expect(next.tasks[20]).toBe(completed);
    expect(known()).not.toBe(remembered);
    expect(known()?.[20]).toBe(completed);
    expect(known()?.slice(0, 20)).toEqual(tasks);
  });

  it('scans the settled items again once a secret is registered after them', () => {
    const marks = new SettledValues();
    const secret = `settled-secret-${Math.random().toString(36).slice(2)}`;
    const tasks = Array.from({ length: 20 }, (_, index) =>
      marks.settle({ index, note: `note ${index} ${secret}` }),
    );
    expect(redactSecrets([...tasks], marks)).toEqual(tasks);
    registerSecretValue(secret);
    const after = redactSecrets([...tasks], marks);
    expect(JSON.stringify(after)).not.toContain(secret);
  });
});
