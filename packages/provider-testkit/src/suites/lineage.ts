import { RuntimeState } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { idsOf, readBack } from '../assertions.js';
import { TestCrew } from '../fixtures/test-crew.js';
import { advanceTestRun, createTestRun, writeTestCheckpoint } from '../fixtures/test-run.js';
import type { Harness } from '../harness.js';

export function describeLineage(harness: Harness): void {
  describe('lineage and branches', () => {
    it('chains parent ids across the writes of a run, and a fork names its fork point', async () => {
      const { provider, location } = await harness.setup();
      const run = createTestRun({ provider, location });
      const main: string[] = [];
      for (let index = 0; index < 3; index += 1) {
        advanceTestRun(run);
        main.push((await writeTestCheckpoint(run, { sync: index === 1 })).id);
      }
      const mainLineage = run.state.lineage.lineageId;
      const branch = run.state.fork('experiment/a');
      expect(branch).toBe('experiment/a');
      const forked: string[] = [];
      for (let index = 0; index < 2; index += 1) {
        advanceTestRun(run);
        forked.push((await writeTestCheckpoint(run)).id);
      }
      const mainList = await provider.list(location, { branch: 'main' });
      expect(idsOf(mainList)).toEqual(main);
      expect(mainList.map((entry) => entry.parentId)).toEqual([null, main[0], main[1]]);
      expect(new Set(mainList.map((entry) => entry.lineageId))).toEqual(new Set([mainLineage]));

      const forkList = await provider.list(location, { branch: 'experiment/a' });
      expect(idsOf(forkList)).toEqual(forked);
      expect(forkList.map((entry) => entry.parentId)).toEqual([main[2], forked[0]]);
      expect(forkList[0]!.lineageId).not.toBe(mainLineage);
      expect(idsOf(await provider.list(location, { lineageId: mainLineage }))).toEqual(main);
      expect(idsOf(await provider.list(location, { lineageId: forkList[0]!.lineageId }))).toEqual(forked);

      const forkDocument = await readBack(provider, location, forked[0]!);
      expect(forkDocument.metadata.branch).toBe('experiment/a');
      expect(forkDocument.metadata.parentId).toBe(main[2]);
      expect((await provider.latest(location, { branch: 'main' }))?.id).toBe(main[2]);
    });

    it('a generated fork branch (fork/<id>-<hex>) is written, listed and read', async () => {
      const { provider, location } = await harness.setup();
      const run = createTestRun({ provider, location });
      const parent = await writeTestCheckpoint(run);
      const branch = run.state.fork();
      expect(branch.startsWith('fork/')).toBe(true);
      advanceTestRun(run);
      const child = await writeTestCheckpoint(run);
      expect(child.branch).toBe(branch);
      expect(child.parentId).toBe(parent.id);
      expect(idsOf(await provider.list(location, { branch }))).toEqual([child.id]);
      expect((await readBack(provider, location, child.id)).metadata.branch).toBe(branch);
    });

    it('restoring a checkpoint on a fork gives back exactly what was saved, and leaves the original branch alone', async () => {
      const { provider, location } = await harness.setup();
      const run = createTestRun({ provider, location });
      const ids: string[] = [];
      for (let index = 0; index < 3; index += 1) {
        advanceTestRun(run);
        ids.push((await writeTestCheckpoint(run)).id);
      }
      const mainBefore = await provider.list(location, { branch: 'main' });
      const saved = await readBack(provider, location, ids[1]!);

      const restoredCrew = TestCrew.fromSnapshot(saved.entities[0]!);
      const restored = RuntimeState.fromDocument(saved, {
        provider,
        location,
        entities: [restoredCrew],
        bus: run.bus,
      });
      expect(restored.lineage.checkpointId).toBe(ids[1]);
      restored.fork('what-if/edited');
      const forkPoint = await restored.writeCheckpoint({ trigger: 'manual' });
      const again = await readBack(provider, location, forkPoint.id);

      expect(again.inputs).toEqual(saved.inputs);
      expect(again.entities).toEqual(saved.entities);
      expect(again.events).toEqual(saved.events);
      expect(again.metadata.eventCount).toBe(saved.metadata.eventCount);
      expect(again.metadata.entities).toEqual(saved.metadata.entities);
      expect(again.metadata.parentId).toBe(ids[1]);
      expect(again.metadata.branch).toBe('what-if/edited');
      expect(again.metadata.lineageId).not.toBe(saved.metadata.lineageId);

      // The fork continues on its own; the original branch is untouched.
      advanceTestRun({ state: restored, crew: restoredCrew, bus: run.bus }, 'edited output');
      const next = await restored.writeCheckpoint();
      expect(next.parentId).toBe(forkPoint.id);
      expect(await provider.list(location, { branch: 'main' })).toEqual(mainBefore);
      expect((await readBack(provider, location, ids[2]!)).events.length).toBe(saved.events.length + 2);
    });
  });
}
