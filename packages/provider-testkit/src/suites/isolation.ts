import { describe, expect, it } from 'vitest';
import { expectCrewlineError, idsOf, readBack } from '../assertions.js';
import type { Harness } from '../harness.js';
import { plannedIds, plannedRun, writePlanned } from './helpers.js';

export function describeIsolation(harness: Harness): void {
  describe('isolation', () => {
    it('two locations of one provider never see each other', async () => {
      const provider = await harness.provider();
      const first = provider.resolveLocation(await harness.location());
      const second = provider.resolveLocation(await harness.location());
      const inFirst = await writePlanned(provider, first, [{ minute: 1 }, { minute: 2, branch: 'b' }]);
      const inSecond = await writePlanned(provider, second, plannedRun('run', [3, 4]));
      expect(idsOf(await provider.list(first))).toEqual(plannedIds(inFirst, [1, 2]));
      expect(idsOf(await provider.list(second))).toEqual(plannedIds(inSecond, [3, 4]));
      const [firstId] = plannedIds(inFirst, [1]) as [string];
      await expectCrewlineError(
        () => provider.read(second, firstId),
        ['not_found'],
        'read from the other location',
      );
      expect(await provider.delete(second, firstId)).toBe(false);
      expect(idsOf((await provider.prune(second, { keep: 1 })).removed)).toEqual(plannedIds(inSecond, [3]));
      expect(idsOf(await provider.list(first))).toEqual(plannedIds(inFirst, [1, 2]));
      expect((await provider.latest(second))?.id).toBe(plannedIds(inSecond, [4])[0]);
      expect((await readBack(provider, first, firstId)).metadata.id).toBe(firstId);
    });

    it('two provider instances on two locations never see each other', async () => {
      const one = await harness.provider();
      const two = await harness.provider();
      const first = one.resolveLocation(await harness.location());
      const second = two.resolveLocation(await harness.location());
      const inFirst = await writePlanned(one, first, [{ minute: 1 }]);
      const inSecond = await writePlanned(two, second, [{ minute: 2 }]);
      expect(idsOf(await one.list(first))).toEqual(plannedIds(inFirst, [1]));
      expect(idsOf(await two.list(second))).toEqual(plannedIds(inSecond, [2]));
      await expectCrewlineError(() => two.read(second, plannedIds(inFirst, [1])[0]!), ['not_found'], 'read');
    });

    it('a second instance on the same location sees what the first wrote (persistent providers)', async (context) => {
      if (harness.options.persistent === false) {
        context.skip('the provider is not persistent (persistent: false)');
        return;
      }
      const one = await harness.provider();
      const location = one.resolveLocation(await harness.location());
      const inOne = await writePlanned(one, location, [{ minute: 1 }, { minute: 2, branch: 'x' }]);
      await one.close?.();
      const two = await harness.provider();
      expect(idsOf(await two.list(location))).toEqual(plannedIds(inOne, [1, 2]));
      const inTwo = await writePlanned(two, location, [{ minute: 3 }]);
      const three = await harness.provider();
      expect(idsOf(await three.list(location))).toEqual([
        ...plannedIds(inOne, [1, 2]),
        ...plannedIds(inTwo, [3]),
      ]);
      expect((await readBack(three, location, plannedIds(inOne, [2])[0]!)).metadata.branch).toBe('x');
    });
  });
}
