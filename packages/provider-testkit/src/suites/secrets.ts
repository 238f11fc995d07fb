import { randomBytes } from 'node:crypto';
import {
  LLMCallCompletedEvent,
  LLMCallFailedEvent,
  registerEnvironmentSecrets,
  TaskCompletedEvent,
  ToolUsageFinishedEvent,
} from '@crewline/events';
import { type CheckpointProvider, parseCheckpointConfig } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { readBack } from '../assertions.js';
import { TestCrew } from '../fixtures/test-crew.js';
import {
  createTestRun,
  plantedSecret,
  sampleInputs,
  type TestRun,
  writeTestCheckpoint,
} from '../fixtures/test-run.js';
import type { Harness } from '../harness.js';
import { filesContaining, isPathLocation, storageFiles } from '../storage-scan.js';

/** A credential of no known shape (letters and digits): only its value, name or context gives it away. */
function shapeless(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('hex')}`;
}

/** Names reported stored verbatim before they were matched by their parts (issue #9). */
const credentialNames = [
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

/** Collects what crewline writes to stderr (the default log sink) while `body` runs. */
async function capturingStderr(body: () => Promise<void>): Promise<string> {
  const logged: string[] = [];
  const originalWrite = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return (originalWrite as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  try {
    await body();
  } finally {
    process.stderr.write = originalWrite;
  }
  return logged.join('');
}

/**
 * Writes two checkpoints of `run` (sync when the provider can, then async) and asserts that no needle
 * is in any stored byte: the read text, the listing, every file of the location (before and after
 * `close`, since databases move data between files when closing) and stderr. Returns the documents
 * read back.
 */
async function expectStoredWithout(
  harness: Harness,
  provider: CheckpointProvider,
  location: string,
  run: TestRun,
  needles: readonly string[],
): Promise<string[]> {
  const documents: string[] = [];
  const logged = await capturingStderr(async () => {
    const first = await writeTestCheckpoint(run, { sync: true });
    const second = await writeTestCheckpoint(run);
    await run.state.settle();
    for (const id of [first.id, second.id]) {
      const raw = await provider.read(location, id);
      const text = 'text' in raw ? raw.text : JSON.stringify(raw.document);
      for (const needle of needles)
        expect(text.includes(needle), `checkpoint ${id} contains ${needle}`).toBe(false);
      documents.push(JSON.stringify(await readBack(provider, location, id)));
    }
    const listing = JSON.stringify(await provider.list(location));
    for (const needle of needles)
      expect(listing.includes(needle), `the listing contains ${needle}`).toBe(false);
    const scan = () => {
      const files = storageFiles(location);
      if (harness.options.persistent !== false && isPathLocation(location)) {
        expect(files.length, `no stored files found under ${location}`).toBeGreaterThan(0);
      }
      for (const needle of needles)
        expect(filesContaining(files, needle), `files containing ${needle}`).toEqual([]);
    };
    scan();
    await provider.close?.();
    scan();
  });
  for (const needle of needles) expect(logged.includes(needle), `stderr contains ${needle}`).toBe(false);
  return documents;
}

export function describeSecrets(harness: Harness): void {
  describe('secret redaction', () => {
    it('a planted API key in inputs, entity data and an event never reaches a stored byte or a log line', async () => {
      const { provider, location } = await harness.setup();
      const secret = plantedSecret();
      const crew = new TestCrew({
        extra: {
          apiKey: secret,
          settings: { model: 'openai:gpt-4o', note: `the key is ${secret} (do not store)` },
        },
      });
      const run = createTestRun({
        provider,
        location,
        crew,
        inputs: { ...sampleInputs(), openaiKey: secret, prompt: `use ${secret} to call the API` },
      });
      run.state.recordEvent(
        new TaskCompletedEvent({ description: 'leaky task', output: `Authorization: Bearer ${secret}` }),
      );
      // The random tail alone must not survive either (a partial redaction is still a leak).
      const documents = await expectStoredWithout(harness, provider, location, run, [
        secret,
        secret.slice(-24),
      ]);
      for (const document of documents) expect(document).toContain('[REDACTED]');
    });

    it('credentials of no known shape, read from the environment and from config, are redacted by value', async () => {
      const { provider, location } = await harness.setup();
      const environmentName = 'CREWLINE_TESTKIT_SERVICE_TOKEN';
      const previous = process.env[environmentName];
      const fromEnvironment = shapeless('env');
      const fromConfig = shapeless('cfg');
      process.env[environmentName] = fromEnvironment;
      try {
        // process.env is read once per process; a credential set later is registered like this.
        registerEnvironmentSecrets();
        parseCheckpointConfig({ location, redact: { values: [fromConfig] } });
        const crew = new TestCrew({ extra: { lastServerReply: `401: unknown key ${fromEnvironment}` } });
        const run = createTestRun({
          provider,
          location,
          crew,
          inputs: { ...sampleInputs(), note: `configured with ${fromConfig}` },
        });
        run.crew.completeNextTask(`the server said: invalid credentials ${fromEnvironment}`);
        run.state.recordEvent(
          new LLMCallFailedEvent({
            model: 'openai-compatible:m',
            callId: 'c1',
            error: `bad key ${fromEnvironment}`,
          }),
        );
        run.state.recordEvent(
          new ToolUsageFinishedEvent({
            toolName: 'http',
            toolCallId: 't1',
            result: { body: `echo ${fromConfig}` },
          }),
        );
        const documents = await expectStoredWithout(harness, provider, location, run, [
          fromEnvironment,
          fromConfig,
        ]);
        expect(documents.at(-1)).toContain('the server said: invalid credentials [REDACTED]');
      } finally {
        if (previous === undefined) delete process.env[environmentName];
        else process.env[environmentName] = previous;
      }
    });

    it('values under credential names (matched by their parts) are redacted, counters are kept', async () => {
      const { provider, location } = await harness.setup();
      const values = credentialNames.map((name) => shapeless(`n${name.length}x`));
      const userNamed = shapeless('user');
      parseCheckpointConfig({ location, redact: { names: ['testkitBadgeCode'] } });
      const crew = new TestCrew({
        extra: {
          settings: Object.fromEntries(credentialNames.map((name, index) => [name, values[index]!])),
          badge: { testkit_badge_code: userNamed },
          usage: { inputTokens: 1234, outputTokens: 56, totalTokens: 1290, maxTokens: 4096 },
          keyword: 'monkey',
        },
      });
      const run = createTestRun({ provider, location, crew });
      const documents = await expectStoredWithout(harness, provider, location, run, [...values, userNamed]);
      const stored = JSON.parse(documents.at(-1)!) as {
        entities: { data: { extra: Record<string, unknown> } }[];
      };
      const extra = stored.entities[0]!.data.extra;
      expect(Object.values(extra.settings as Record<string, string>)).toEqual(
        credentialNames.map(() => '[REDACTED]'),
      );
      expect(extra.usage).toEqual({
        inputTokens: 1234,
        outputTokens: 56,
        totalTokens: 1290,
        maxTokens: 4096,
      });
      expect(extra.keyword).toBe('monkey');
    });

    it('credentials written in model answers and tool results as text are redacted, innocent text is kept', async () => {
      const { provider, location } = await harness.setup();
      const inJson = shapeless('js');
      const inHeader = shapeless('hd');
      const inQuery = shapeless('qs');
      const inYaml = shapeless('ym');
      const byPattern = `TKPAT-${randomBytes(6).toString('hex')}`;
      parseCheckpointConfig({ location, redact: { patterns: [/TKPAT-[0-9a-f]{12}/] } });
      const innocent =
        'We are close to the token budget; use the password reset link; API key rotation policy applies. ' +
        '```ts\nconst tokens = tokenize(text);\n```';
      const run = createTestRun({ provider, location });
      run.state.recordEvent(
        new LLMCallCompletedEvent({
          model: 'offline:default',
          callId: 'c1',
          response: `Here is the config: {"api_key": "${inJson}", "model": "gpt-4o"}. ${innocent}`,
        }),
      );
      run.state.recordEvent(
        new ToolUsageFinishedEvent({
          toolName: 'http',
          toolCallId: 't1',
          result: `GET https://db.example.com/q?user=app&password=${inQuery}\nAuthorization: Bearer ${inHeader}\ntoken: ${inYaml}\nref ${byPattern}`,
        }),
      );
      run.crew.completeNextTask(innocent);
      const documents = await expectStoredWithout(harness, provider, location, run, [
        inJson,
        inHeader,
        inQuery,
        inYaml,
        byPattern,
      ]);
      const last = documents.at(-1)!;
      expect(last).toContain(JSON.stringify('{"api_key": "[REDACTED]", "model": "gpt-4o"}').slice(1, -1));
      expect(last).toContain(JSON.stringify(innocent).slice(1, -1));
    });
  });
}
