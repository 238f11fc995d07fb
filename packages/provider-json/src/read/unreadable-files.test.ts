import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setLogSink } from '@crewline/events';
import { buildCheckpointWrite, createTestRun } from '@crewline/provider-testkit/fixtures';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonProvider } from '../json-provider.js';

// A listing reads only the first lines of each file; a file cut short keeps them intact.
describe('JsonProvider listing unreadable checkpoint files', () => {
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

  it('listWithUnreadable names each file the listing leaves out by its file name, in the same pass', async () => {
    const provider = new JsonProvider();
    const run = createTestRun({ inputs: { topic: 'reefs' } });
    const first = await provider.write(location, buildCheckpointWrite({ run }));
    const damaged = await provider.write(
      location,
      buildCheckpointWrite({ run, metadata: { parentId: first.id } }),
    );
    writeFileSync(
      damaged.reference,
      readFileSync(damaged.reference, 'utf8').split('\n').slice(0, 2).join('\n'),
    );
    const listing = await provider.listWithUnreadable(location);
    expect(listing.checkpoints.map((entry) => entry.id)).toEqual([first.id]);
    expect(listing.unreadable).toEqual([
      {
        id: damaged.id,
        branch: 'main',
        parentId: first.id,
        reference: damaged.reference,
        sizeBytes: expect.any(Number),
        reason: expect.stringContaining('looks truncated'),
      },
    ]);
    expect((await provider.listWithUnreadable(location, { branch: 'main' })).unreadable).toHaveLength(1);
    expect((await provider.listWithUnreadable(location, { branch: 'other' })).unreadable).toEqual([]);
    // Its run cannot be read from it: a query for a run leaves it out.
    expect((await provider.listWithUnreadable(location, { lineageId: first.lineageId })).unreadable).toEqual(
      [],
    );
    expect(await provider.list(location)).toEqual(listing.checkpoints);
  });
});
