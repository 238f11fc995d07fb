import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setLogSink } from '@crewline/events';
import { buildCheckpointWrite, createTestRun } from '@crewline/provider-testkit/fixtures';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonProvider } from './json-provider.js';

// A listing reads only the first lines of each file; a file cut short keeps them intact.
describe('JsonProvider listing a checkpoint file cut short', () => {
  let location: string;
  let warnings: string[];
  let restoreLogger: () => unknown;
  beforeEach(() => {
    location = mkdtempSync(join(tmpdir(), 'crewline-json-truncated-'));
    warnings = [];
    const previous = setLogSink((record) => {
      if (record.level === 'warn') warnings.push(`${record.message}: ${String(record.error)}`);
    });
    restoreLogger = () => setLogSink(previous);
  });
  afterEach(() => {
    restoreLogger();
    rmSync(location, { recursive: true, force: true });
  });

  // Small files are read whole with their head; large ones (over the 16 KiB head) have their end read apart.
  for (const [size, inputs] of [
    ['small', { topic: 'reefs' }],
    ['large', { topic: 'reefs', notes: 'x'.repeat(40_000) }],
  ] as const) {
    it(`leaves out a ${size} file cut after any of its lines, and warns that it is unreadable`, async () => {
      const provider = new JsonProvider();
      const stored = await provider.write(location, buildCheckpointWrite({ run: createTestRun({ inputs }) }));
      const text = readFileSync(stored.reference, 'utf8');
      expect(await provider.list(location)).toHaveLength(1);
      const lineEnds = [...text.matchAll(/\n/g)].map((match) => match.index + 1).slice(1, -1);
      expect(lineEnds.length).toBeGreaterThan(3);
      for (const end of lineEnds) {
        writeFileSync(stored.reference, text.slice(0, end));
        expect(await provider.list(location), `cut after byte ${end}`).toEqual([]);
        expect(await provider.latest(location), `cut after byte ${end}`).toBeUndefined();
      }
      expect(warnings.some((line) => line.includes('looks truncated'))).toBe(true);
      // The whole text, without its last line break or with trailing spaces, is still a checkpoint.
      for (const whole of [text.trimEnd(), `${text}  \n`]) {
        writeFileSync(stored.reference, whole);
        expect((await provider.list(location)).map((entry) => entry.id)).toEqual([stored.id]);
      }
    });
  }
});
