import { describe, expect, it } from 'vitest';
import { expectListed, idsOf, readBack } from '../assertions.js';
import type { Harness } from '../harness.js';
import { plannedIds, writePlanned } from './helpers.js';

export function describeList(harness: Harness): void {
  describe('list', () => {
    it('checkLocationExists (where offered) resolves for a location written to', async (context) => {
      const { provider, location } = await harness.setup();
      if (provider.checkLocationExists === undefined) {
        context.skip();
        return;
      }
      await writePlanned(provider, location, [{ minute: 1 }]);
      await expect(provider.checkLocationExists(location)).resolves.toBeUndefined();
    });

    it('lists metadata only, oldest first, whatever the write order', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(provider, location, [
        { minute: 30 },
        { minute: 10 },
        { minute: 50, branch: 'feature/deep/branch' },
        { minute: 20, branch: 'other' },
        { minute: 40 },
      ]);
      const list = await provider.list(location);
      expect(idsOf(list)).toEqual(plannedIds(written, [10, 20, 30, 40, 50]));
      for (const stored of list) {
        const entry = [...written.values()].find((candidate) => candidate.metadata.id === stored.id)!;
        expectListed(stored, entry.metadata);
      }
    });

    it('gives each checkpoint a reference that parseReference and read resolve', async () => {
      const { provider, location } = await harness.setup();
      const written = await writePlanned(provider, location, [
        { minute: 1 },
        { minute: 2, branch: 'fork/abc-123' },
        { minute: 3 },
      ]);
      for (const stored of await provider.list(location)) {
        const parsed = provider.parseReference(stored.reference);
        expect(parsed, `parseReference(${JSON.stringify(stored.reference)})`).toBeDefined();
        const id = parsed!.id ?? (await provider.latest(parsed!.location, { branch: stored.branch }))?.id;
        expect(id).toBe(stored.id);
        const document = await readBack(provider, parsed!.location, id!);
        expect(document.metadata).toEqual(
          [...written.values()].find((entry) => entry.metadata.id === stored.id)!.metadata,
        );
      }
      // What write returned resolves the same way.
      const first = written.get(1)!.stored;
      const parsed = provider.parseReference(first.reference)!;
      expect((await readBack(provider, parsed.location, parsed.id ?? first.id)).metadata.id).toBe(first.id);
    });

    it('filters by branch, by lineageId, and by both', async () => {
      const { provider, location } = await harness.setup();
      const lineageA = 'lineage-a';
      const lineageB = 'lineage-b';
      const written = await writePlanned(provider, location, [
        { minute: 1, lineageId: lineageA },
        { minute: 2, lineageId: lineageB },
        { minute: 3, lineageId: lineageA, branch: 'feature/x' },
        { minute: 4, lineageId: lineageA },
        { minute: 5, lineageId: lineageB, branch: 'feature/x/y' },
        { minute: 6, lineageId: lineageB, branch: 'feature' },
      ]);
      expect(idsOf(await provider.list(location, { branch: 'main' }))).toEqual(
        plannedIds(written, [1, 2, 4]),
      );
      expect(idsOf(await provider.list(location, { branch: 'feature/x' }))).toEqual(plannedIds(written, [3]));
      expect(idsOf(await provider.list(location, { branch: 'feature' }))).toEqual(plannedIds(written, [6]));
      expect(idsOf(await provider.list(location, { lineageId: lineageA }))).toEqual(
        plannedIds(written, [1, 3, 4]),
      );
      expect(idsOf(await provider.list(location, { branch: 'main', lineageId: lineageB }))).toEqual(
        plannedIds(written, [2]),
      );
      expect(await provider.list(location, { branch: 'no-such-branch' })).toEqual([]);
      expect(await provider.list(location, { lineageId: 'no-such-lineage' })).toEqual([]);
    });

    it('an empty location lists nothing and has no latest', async () => {
      const { provider, location } = await harness.setup();
      expect(await provider.list(location)).toEqual([]);
      expect(await provider.latest(location)).toBeUndefined();
      expect(await provider.latest(location, { branch: 'main' })).toBeUndefined();
    });

    it('a listing is a copy: changing it does not change what is stored', async () => {
      const { provider, location } = await harness.setup();
      await writePlanned(provider, location, [{ minute: 1 }, { minute: 2 }]);
      const first = await provider.list(location);
      const snapshot = structuredClone(first);
      first[0]!.trigger = 'tampered';
      first[0]!.entities.push({ kind: 'agent', id: 'x', name: 'x' });
      first.pop();
      expect(await provider.list(location)).toEqual(snapshot);
    });
  });
}
