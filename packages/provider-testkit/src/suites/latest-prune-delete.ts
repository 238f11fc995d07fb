import { describe, expect, it } from 'vitest';
import { expectCrewlineError, expectListed, idsOf, readBack } from '../assertions.js';
import type { Harness } from '../harness.js';
import { byMinute, plannedIds, plannedRun, writePlanned } from './helpers.js';

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
    // Two unrelated runs on `main` (every run writes there by default) and one on `other`.
    const twoRunsOnMainOneOther = byMinute(
      plannedRun('run-a', [1, 3, 4, 6]),
      plannedRun('run-b', [2, 5, 8]),
      plannedRun('run-c', [7, 9, 10], { branch: 'other' }),
    );

    it('keeps the newest N of every run, however runs share a branch', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(provider, location, twoRunsOnMainOneOther);
      const result = await provider.prune(location, { keep: 2 });
      expect(result.dryRun).toBe(false);
      expect(idsOf(result.removed)).toEqual(plannedIds(written, [1, 2, 3, 7]));
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
      expect(idsOf(await provider.list(location))).toEqual(plannedIds(written, [4, 5, 6, 8, 9, 10]));
      for (const id of plannedIds(written, [4, 5, 6, 8, 9, 10]))
        expect((await readBack(provider, location, id)).metadata.id).toBe(id);
    });

    it("with a lineage id (a run's maxCheckpoints), removes that run's checkpoints and no other's", async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(provider, location, twoRunsOnMainOneOther);
      const result = await provider.prune(location, { keep: 1, lineageId: 'run-b' });
      expect(idsOf(result.removed)).toEqual(plannedIds(written, [2, 5]));
      expect(idsOf(await provider.list(location, { lineageId: 'run-a' }))).toEqual(
        plannedIds(written, [1, 3, 4, 6]),
      );
      expect(idsOf(await provider.list(location, { lineageId: 'run-b' }))).toEqual(plannedIds(written, [8]));
      expect(idsOf(await provider.list(location, { branch: 'other' }))).toEqual(
        plannedIds(written, [7, 9, 10]),
      );
    });

    it('never removes a fork point, nor the last checkpoint of a run', async () => {
      const { provider, location } = await harness.setup();
      // run-a: 1 → 2 → 3 → 6. A fork (its own run, on its own branch) starts from 2; a second fork
      // on main itself starts from 3; a run of one checkpoint (4) and a run whose checkpoints all
      // sit on fork/x.
      const written = await writePlanned(
        provider,
        location,
        byMinute(
          plannedRun('run-a', [1, 2, 3, 6]),
          plannedRun('fork-1', [5, 7], { branch: 'fork/x', firstParentMinute: 2 }),
          plannedRun('fork-2', [8], { firstParentMinute: 3 }),
          plannedRun('single', [4]),
        ),
      );
      // 5, fork-1's first checkpoint, stays too: it is what names 2 (see the next test).
      const result = await provider.prune(location, { keep: 1 });
      expect(idsOf(result.removed)).toEqual(plannedIds(written, [1]));
      expect(idsOf(await provider.list(location))).toEqual(plannedIds(written, [2, 3, 4, 5, 6, 7, 8]));
    });

    it("keeps a fork point after the fork's own retention ran, then its origin's (maxCheckpoints on both)", async () => {
      const { provider, location } = await harness.setup();
      // run-a: 1 → 2 → 4 → 7; fork-b starts from 2: 3 → 5 → 6. Each run prunes only itself, as
      // maxCheckpoints does, the fork first. Were the fork's first checkpoint (3) removed, nothing
      // stored would name 2 any more, the origin's prune would remove it, and the fork could no
      // longer be linked to its origin from storage.
      const written = await writePlanned(
        provider,
        location,
        byMinute(
          plannedRun('run-a', [1, 2, 4, 7]),
          plannedRun('fork-b', [3, 5, 6], { branch: 'b', firstParentMinute: 2 }),
        ),
      );
      const forkPruned = await provider.prune(location, { keep: 1, lineageId: 'fork-b' });
      expect(idsOf(forkPruned.removed)).toEqual(plannedIds(written, [5]));
      const originPruned = await provider.prune(location, { keep: 1, lineageId: 'run-a' });
      expect(idsOf(originPruned.removed)).toEqual(plannedIds(written, [1, 4]));
      const kept = await provider.list(location);
      expect(idsOf(kept)).toEqual(plannedIds(written, [2, 3, 6, 7]));
      expect(kept.find((entry) => entry.lineageId === 'fork-b')!.parentId).toBe(plannedIds(written, [2])[0]);
      // A prune of everything keeps the link too.
      expect((await provider.prune(location, { keep: 1 })).removed).toEqual([]);
    });

    it('never removes a head that its run did not continue (a resume from an older checkpoint)', async () => {
      const { provider, location } = await harness.setup();
      // run-a: 1 → 2 → 3, then resumed from 1 again: 1 → 4 → 5. Both 3 and 5 are heads of the run.
      const written = await writePlanned(provider, location, [
        ...plannedRun('run-a', [1, 2, 3]),
        ...plannedRun('run-a', [4, 5], { firstParentMinute: 1 }),
      ]);
      const result = await provider.prune(location, { keep: 1 });
      expect(idsOf(result.removed)).toEqual(plannedIds(written, [1, 2, 4]));
      expect(idsOf(await provider.list(location))).toEqual(plannedIds(written, [3, 5]));
    });

    it('with a branch, prunes the runs of that branch only', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(provider, location, twoRunsOnMainOneOther);
      const result = await provider.prune(location, { keep: 1, branch: 'other' });
      expect(idsOf(result.removed)).toEqual(plannedIds(written, [7, 9]));
      expect(idsOf(await provider.list(location, { branch: 'main' }))).toEqual(
        plannedIds(written, [1, 2, 3, 4, 5, 6, 8]),
      );
      expect(idsOf(await provider.list(location, { branch: 'other' }))).toEqual(plannedIds(written, [10]));
    });

    it('removes checkpoints created before olderThan, in every run', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(
        provider,
        location,
        byMinute(
          plannedRun('run-a', [1, 3], {
            createdAt: ['2020-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z'],
          }),
          plannedRun('run-b', [2, 4], {
            branch: 'other',
            createdAt: ['2020-06-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z'],
          }),
        ),
      );
      const result = await provider.prune(location, { olderThan: new Date('2025-01-01T00:00:00.000Z') });
      expect(idsOf(result.removed)).toEqual(plannedIds(written, [1, 2]));
      expect(idsOf(await provider.list(location))).toEqual(plannedIds(written, [3, 4]));
    });

    it('olderThan alone never removes the newest checkpoint of a run', async () => {
      const { provider, location } = await harness.setup();
      // Both runs have been idle for years: each keeps its latest checkpoint, so it can resume.
      const old = ['2020-01-01T00:00:00.000Z', '2020-02-01T00:00:00.000Z', '2020-03-01T00:00:00.000Z'];
      const written = await writePlanned(
        provider,
        location,
        byMinute(
          plannedRun('run-a', [1, 3, 5], { createdAt: old }),
          plannedRun('run-b', [2, 4], { createdAt: old }),
        ),
      );
      const result = await provider.prune(location, { olderThan: new Date('2025-01-01T00:00:00.000Z') });
      expect(idsOf(result.removed)).toEqual(plannedIds(written, [1, 2, 3]));
      expect(idsOf(await provider.list(location))).toEqual(plannedIds(written, [4, 5]));
      expect((await provider.latest(location, { lineageId: 'run-b' }))?.id).toBe(plannedIds(written, [4])[0]);
    });

    it('with keep and olderThan, removes only what both select', async () => {
      const { provider, location } = await harness.setup();
      const old = '2020-01-01T00:00:00.000Z';
      const recent = '2030-01-01T00:00:00.000Z';
      const written = await writePlanned(
        provider,
        location,
        byMinute(
          plannedRun('run-a', [1, 2, 3, 4, 5], { createdAt: [old, recent, old, old, recent] }),
          plannedRun('idle', [6, 7], { branch: 'idle', createdAt: [old, old] }),
        ),
      );
      const result = await provider.prune(location, {
        keep: 2,
        olderThan: new Date('2025-01-01T00:00:00.000Z'),
      });
      // 2 is beyond the newest two but recent; 4 is old but among the newest two: both stay. The idle
      // run has nothing beyond its newest two.
      expect(idsOf(result.removed)).toEqual(plannedIds(written, [1, 3]));
      expect(idsOf(await provider.list(location))).toEqual(plannedIds(written, [2, 4, 5, 6, 7]));
    });

    it('dryRun reports what would be removed and removes nothing', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(provider, location, twoRunsOnMainOneOther);
      const before = await provider.list(location);
      const result = await provider.prune(location, { keep: 1, dryRun: true });
      expect(result.dryRun).toBe(true);
      expect(idsOf(result.removed)).toEqual(plannedIds(written, [1, 2, 3, 4, 5, 7, 9]));
      expect(await provider.list(location)).toEqual(before);
      for (const entry of before)
        expect((await readBack(provider, location, entry.id)).metadata.id).toBe(entry.id);
    });

    it('without keep or olderThan removes nothing', async () => {
      const { provider, location } = await harness.setup();
      await writePlanned(provider, location, twoRunsOnMainOneOther);
      const before = await provider.list(location);
      expect((await provider.prune(location, {})).removed).toEqual([]);
      expect(await provider.list(location)).toEqual(before);
    });

    it('separate runs of one checkpoint each are never pruned', async () => {
      const { provider, location } = await harness.setup();
      await writePlanned(provider, location, [{ minute: 1 }, { minute: 2 }, { minute: 3, branch: 'x' }]);
      expect((await provider.prune(location, { keep: 1 })).removed).toEqual([]);
      expect(await provider.list(location)).toHaveLength(3);
    });

    it('keep 1 leaves each run its latest, and the branch can be written again', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(
        provider,
        location,
        byMinute(plannedRun('run-a', [1, 3], { branch: 'a/b' }), plannedRun('run-b', [2])),
      );
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
