import { describe, expect, it } from 'vitest';
import { expectCrewlineError, expectListed, idsOf, readBack } from '../assertions.js';
import type { Harness } from '../harness.js';
import { plannedIds, writePlanned } from './helpers.js';

const fiveMainThreeOther = [
  { minute: 1 },
  { minute: 2, branch: 'other' },
  { minute: 3 },
  { minute: 4 },
  { minute: 5, branch: 'other' },
  { minute: 6 },
  { minute: 7, branch: 'other' },
  { minute: 8 },
];

export function describeLatestPruneDelete(harness: Harness): void {
  describe('latest', () => {
    it('is the newest checkpoint overall, per branch and per lineage', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(provider, location, [
        { minute: 1, lineageId: 'l1' },
        { minute: 3, lineageId: 'l2', branch: 'fork/a' },
        { minute: 2, lineageId: 'l1' },
        { minute: 4, lineageId: 'l2', branch: 'fork/a/b' },
      ]);
      const latest = await provider.latest(location);
      expectListed(latest!, written.get(4)!.metadata);
      expect((await provider.latest(location, { branch: 'main' }))?.id).toBe(plannedIds(written, [2])[0]);
      expect((await provider.latest(location, { branch: 'fork/a' }))?.id).toBe(plannedIds(written, [3])[0]);
      expect((await provider.latest(location, { lineageId: 'l1' }))?.id).toBe(plannedIds(written, [2])[0]);
      expect(await provider.latest(location, { branch: 'fork' })).toBeUndefined();
    });
  });

  describe('prune', () => {
    it('keeps the newest N of every branch', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(provider, location, fiveMainThreeOther);
      const result = await provider.prune(location, { keep: 2 });
      expect(result.dryRun).toBe(false);
      expect(idsOf(result.removed).sort()).toEqual(plannedIds(written, [1, 2, 3, 4]).sort());
      for (const removed of result.removed) {
        expectListed(
          removed,
          [...written.values()].find((entry) => entry.metadata.id === removed.id)!.metadata,
        );
        await expectCrewlineError(
          () => provider.read(location, removed.id),
          ['not_found'],
          'read of a pruned checkpoint',
        );
      }
      expect(idsOf(await provider.list(location))).toEqual(plannedIds(written, [5, 6, 7, 8]));
      for (const id of plannedIds(written, [5, 6, 7, 8]))
        expect((await readBack(provider, location, id)).metadata.id).toBe(id);
    });

    it('with a branch, prunes that branch only', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(provider, location, fiveMainThreeOther);
      const result = await provider.prune(location, { keep: 1, branch: 'other' });
      expect(idsOf(result.removed).sort()).toEqual(plannedIds(written, [2, 5]).sort());
      expect(idsOf(await provider.list(location, { branch: 'main' }))).toEqual(
        plannedIds(written, [1, 3, 4, 6, 8]),
      );
      expect(idsOf(await provider.list(location, { branch: 'other' }))).toEqual(plannedIds(written, [7]));
    });

    it('removes checkpoints created before olderThan, on every branch', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(provider, location, [
        { minute: 1, createdAt: '2020-01-01T00:00:00.000Z' },
        { minute: 2, branch: 'other', createdAt: '2020-06-01T00:00:00.000Z' },
        { minute: 3, createdAt: '2030-01-01T00:00:00.000Z' },
        { minute: 4, branch: 'other', createdAt: '2030-01-01T00:00:00.000Z' },
      ]);
      const result = await provider.prune(location, { olderThan: new Date('2025-01-01T00:00:00.000Z') });
      expect(idsOf(result.removed).sort()).toEqual(plannedIds(written, [1, 2]).sort());
      expect(idsOf(await provider.list(location))).toEqual(plannedIds(written, [3, 4]));
    });

    it('olderThan alone never removes the newest checkpoint of a branch', async () => {
      const { provider, location } = await harness.setup();
      // Both branches have been idle for years: each keeps its latest checkpoint, so it can resume.
      const written = await writePlanned(provider, location, [
        { minute: 1, createdAt: '2020-01-01T00:00:00.000Z' },
        { minute: 2, branch: 'idle', createdAt: '2020-01-01T00:00:00.000Z' },
        { minute: 3, createdAt: '2020-02-01T00:00:00.000Z' },
        { minute: 4, branch: 'idle', createdAt: '2020-02-01T00:00:00.000Z' },
        { minute: 5, createdAt: '2020-03-01T00:00:00.000Z' },
      ]);
      const result = await provider.prune(location, { olderThan: new Date('2025-01-01T00:00:00.000Z') });
      expect(idsOf(result.removed).sort()).toEqual(plannedIds(written, [1, 2, 3]).sort());
      expect(idsOf(await provider.list(location))).toEqual(plannedIds(written, [4, 5]));
      expect((await provider.latest(location, { branch: 'idle' }))?.id).toBe(plannedIds(written, [4])[0]);
    });

    it('with keep and olderThan, removes only what both select', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(provider, location, [
        { minute: 1, createdAt: '2020-01-01T00:00:00.000Z' },
        { minute: 2, createdAt: '2030-01-01T00:00:00.000Z' },
        { minute: 3, createdAt: '2020-01-01T00:00:00.000Z' },
        { minute: 4, createdAt: '2020-01-01T00:00:00.000Z' },
        { minute: 5, createdAt: '2030-01-01T00:00:00.000Z' },
        { minute: 6, branch: 'idle', createdAt: '2020-01-01T00:00:00.000Z' },
        { minute: 7, branch: 'idle', createdAt: '2020-01-01T00:00:00.000Z' },
      ]);
      const result = await provider.prune(location, {
        keep: 2,
        olderThan: new Date('2025-01-01T00:00:00.000Z'),
      });
      // 2 is beyond the newest two but recent; 4 is old but among the newest two: both stay. The idle
      // branch has nothing beyond its newest two.
      expect(idsOf(result.removed).sort()).toEqual(plannedIds(written, [1, 3]).sort());
      expect(idsOf(await provider.list(location))).toEqual(plannedIds(written, [2, 4, 5, 6, 7]));
    });

    it('dryRun reports what would be removed and removes nothing', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(provider, location, fiveMainThreeOther);
      const before = await provider.list(location);
      const result = await provider.prune(location, { keep: 1, dryRun: true });
      expect(result.dryRun).toBe(true);
      expect(idsOf(result.removed).sort()).toEqual(plannedIds(written, [1, 2, 3, 4, 5, 6]).sort());
      expect(await provider.list(location)).toEqual(before);
      for (const entry of before)
        expect((await readBack(provider, location, entry.id)).metadata.id).toBe(entry.id);
    });

    it('without keep or olderThan removes nothing', async () => {
      const { provider, location } = await harness.setup();
      await writePlanned(provider, location, fiveMainThreeOther);
      const before = await provider.list(location);
      expect((await provider.prune(location, {})).removed).toEqual([]);
      expect(await provider.list(location)).toEqual(before);
    });

    it('keep 1 leaves each branch its latest, and the branch can be written again', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(provider, location, [
        { minute: 1, branch: 'a/b' },
        { minute: 2 },
        { minute: 3, branch: 'a/b' },
      ]);
      const result = await provider.prune(location, { keep: 1, branch: 'a/b' });
      expect(idsOf(result.removed)).toEqual(plannedIds(written, [1]));
      expect(idsOf(await provider.list(location))).toEqual(plannedIds(written, [2, 3]));
      const again = await writePlanned(provider, location, [{ minute: 4, branch: 'a/b' }]);
      expect(idsOf(await provider.list(location, { branch: 'a/b' }))).toEqual([
        ...plannedIds(written, [3]),
        ...plannedIds(again, [4]),
      ]);
    });
  });

  describe('delete', () => {
    it('deletes one checkpoint and reports whether it existed', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(provider, location, [
        { minute: 1 },
        { minute: 2, branch: 'x/y' },
        { minute: 3 },
      ]);
      const [first, second, third] = plannedIds(written, [1, 2, 3]) as [string, string, string];
      expect(await provider.delete(location, second)).toBe(true);
      await expectCrewlineError(
        () => provider.read(location, second),
        ['not_found'],
        'read of a deleted checkpoint',
      );
      expect(idsOf(await provider.list(location))).toEqual([first, third]);
      expect(await provider.delete(location, second)).toBe(false);
      expect(await provider.delete(location, '20200101T000000000-0000abcd')).toBe(false);
      expect((await readBack(provider, location, first)).metadata.id).toBe(first);
      expect((await provider.latest(location))?.id).toBe(third);
      expect(await provider.delete(location, third)).toBe(true);
      expect((await provider.latest(location))?.id).toBe(first);
    });
  });
}
