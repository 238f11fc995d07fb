import { TaskCompletedEvent } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { readBack } from '../assertions.js';
import { TestCrew } from '../fixtures/test-crew.js';
import { createTestRun, plantedSecret, sampleInputs, writeTestCheckpoint } from '../fixtures/test-run.js';
import type { Harness } from '../harness.js';
import { filesContaining, isPathLocation, storageFiles } from '../storage-scan.js';

export function describeSecrets(harness: Harness): void {
  describe('secret redaction', () => {
    it('a planted API key in inputs, entity data and an event never reaches a stored byte or a log line', async () => {
      const { provider, location } = await harness.setup();
      const secret = plantedSecret();
      // The random tail alone must not survive either (a partial redaction is still a leak).
      const needles = [secret, secret.slice(-24)];
      const logged: string[] = [];
      const originalWrite = process.stderr.write.bind(process.stderr);
      process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        logged.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        return (originalWrite as (...args: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof process.stderr.write;
      try {
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
        const first = await writeTestCheckpoint(run, { sync: true });
        const second = await writeTestCheckpoint(run);
        await run.state.settle();

        for (const id of [first.id, second.id]) {
          const raw = await provider.read(location, id);
          const text = 'text' in raw ? raw.text : JSON.stringify(raw.document);
          for (const needle of needles)
            expect(text.includes(needle), `checkpoint ${id} contains the key`).toBe(false);
          const document = await readBack(provider, location, id);
          expect(JSON.stringify(document)).toContain('[REDACTED]');
        }
        const listing = JSON.stringify(await provider.list(location));
        for (const needle of needles) expect(listing.includes(needle)).toBe(false);
        const scan = () => {
          const files = storageFiles(location);
          if (harness.options.persistent !== false && isPathLocation(location)) {
            expect(files.length, `no stored files found under ${location}`).toBeGreaterThan(0);
          }
          for (const needle of needles)
            expect(filesContaining(files, needle), 'files containing the key').toEqual([]);
        };
        scan();
        // Again after close: databases may move data between files (WAL checkpointing) when closing.
        await provider.close?.();
        scan();
      } finally {
        process.stderr.write = originalWrite;
      }
      for (const needle of needles) expect(logged.join('').includes(needle)).toBe(false);
    });
  });
}
