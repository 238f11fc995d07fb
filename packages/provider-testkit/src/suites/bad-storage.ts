import type { CrewlineErrorCode } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { expectCrewlineError, idsOf, readBack } from '../assertions.js';
import { advanceTestRun, buildCheckpointWrite, createTestRun } from '../fixtures/test-run.js';
import type { Harness } from '../harness.js';
import type { CorruptionMode } from '../options.js';
import { plannedIds, writePlanned } from './helpers.js';

const expectedCodes: Record<CorruptionMode, readonly CrewlineErrorCode[]> = {
  truncate: ['corrupt_checkpoint', 'read_failed'],
  garbage: ['corrupt_checkpoint', 'read_failed'],
  'newer-version': ['unsupported_version'],
  proto: ['corrupt_checkpoint', 'read_failed'],
};

/** A checkpoint of roughly `bytes` bytes (one long task output). */
function bigCheckpoint(bytes: number) {
  const run = createTestRun();
  advanceTestRun(run, `big output ${'x'.repeat(bytes)}`);
  return buildCheckpointWrite({ run });
}

export function describeBadStorage(harness: Harness): void {
  describe('bad input: damaged stored data', () => {
    const modes: CorruptionMode[] = ['truncate', 'garbage', 'newer-version', 'proto'];
    for (const mode of modes) {
      if (!harness.options.corrupt) {
        it.skip(`${mode}: skipped because the provider gave no \`corrupt\` option to damage its storage`, () => {});
        continue;
      }
      const corrupt = harness.options.corrupt;
      it(`${mode}: reading it gives a typed error; listing, the other checkpoints and delete still work`, async () => {
        const { provider, location } = await harness.setup();
        const written = await writePlanned(provider, location, [
          { minute: 1 },
          { minute: 2, branch: 'side' },
          { minute: 3 },
        ]);
        const [intact, other, damaged] = plannedIds(written, [1, 2, 3]) as [string, string, string];
        const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
        await corrupt(location, damaged, mode);

        await expectCrewlineError(
          () => readBack(provider, location, damaged),
          expectedCodes[mode],
          `reading the ${mode} checkpoint`,
        );
        // As a restore reads it (through the provider's readParsed, where it has one).
        await expectCrewlineError(
          () => readDocument(provider, location, damaged),
          expectedCodes[mode],
          `reading the ${mode} checkpoint as a restore does`,
        );
        const listed = idsOf(await provider.list(location));
        expect(listed).toContain(intact);
        expect(listed).toContain(other);
        const latest = await provider.latest(location);
        if (latest !== undefined) expect([other, damaged]).toContain(latest.id);
        expect((await readBack(provider, location, intact)).metadata.id).toBe(intact);
        expect((await readBack(provider, location, other)).metadata.branch).toBe('side');

        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);

        expect(await provider.delete(location, damaged)).toBe(true);
        await expectCrewlineError(() => provider.read(location, damaged), ['not_found'], 'read after delete');
        expect(idsOf(await provider.list(location))).toEqual([intact, other]);
      });
    }
  });

  describe('bad input: oversized checkpoints', () => {
    it('the core refuses stored text over its size limit with too_large', async () => {
      const { provider, location } = await harness.setup();
      const write = bigCheckpoint(200_000);
      await provider.write(location, write);
      const raw = await provider.read(location, write.metadata.id);
      if (!('text' in raw)) {
        expect(raw.document).toBeTypeOf('object');
        return;
      }
      await expectCrewlineError(
        () => readDocument(provider, location, write.metadata.id, { maxBytes: 64 * 1024 }),
        ['too_large'],
        'readDocument with maxBytes 64 KiB',
      );
      expect((await readDocument(provider, location, write.metadata.id)).metadata.id).toBe(write.metadata.id);
    });

    it('a size-limited provider refuses to write or read past its limit, and still lists', async (context) => {
      if (!harness.options.createLimitedProvider) {
        context.skip('no createLimitedProvider option given; the provider-level size cap is not tested');
        return;
      }
      const limit = 64 * 1024;
      const limited = await harness.limitedProvider(limit);
      const location = limited.resolveLocation(await harness.location());
      const small = buildCheckpointWrite();
      await limited.write(location, small);
      const big = bigCheckpoint(200_000);
      let refusedWrite = false;
      try {
        await limited.write(location, big);
      } catch (error) {
        refusedWrite = true;
        await expectCrewlineError(() => Promise.reject(error), ['too_large'], 'writing past the limit');
      }
      if (refusedWrite) {
        expect(idsOf(await limited.list(location))).toEqual([small.metadata.id]);
        if (harness.options.persistent === false) return;
        const unlimited = await harness.provider();
        await unlimited.write(location, big);
      }
      await expectCrewlineError(
        () => limited.read(location, big.metadata.id),
        ['too_large'],
        'reading past the limit',
      );
      expect(idsOf(await limited.list(location))).toEqual([small.metadata.id, big.metadata.id]);
      expect((await readBack(limited, location, small.metadata.id)).metadata.id).toBe(small.metadata.id);
    });
  });
}
