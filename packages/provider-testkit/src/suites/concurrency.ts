import type { CheckpointDocument } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { idsOf, readBack } from '../assertions.js';
import { TestCrew } from '../fixtures/test-crew.js';
import { advanceTestRun, buildCheckpointWrite, createTestRun } from '../fixtures/test-run.js';
import type { Harness } from '../harness.js';

export function describeConcurrency(harness: Harness): void {
  describe('concurrency', () => {
    it('many concurrent async writes in one process lose nothing', async () => {
      const { provider, location } = await harness.setup();
      const count = harness.options.concurrentWrites ?? 40;
      const writes = Array.from({ length: count }, (_, index) =>
        buildCheckpointWrite({
          run: createTestRun({
            branch: index % 3 === 0 ? 'main' : `parallel/${index % 4}`,
            crew: new TestCrew({ id: `crew-${index}` }),
          }),
        }),
      );
      const stored = await Promise.all(writes.map((write) => provider.write(location, write)));
      expect(stored.map((entry) => entry.id)).toEqual(writes.map((write) => write.metadata.id));
      const listed = await provider.list(location);
      expect(idsOf(listed)).toEqual(writes.map((write) => write.metadata.id).sort());
      const documents = await Promise.all(
        writes.map((write) => readBack(provider, location, write.metadata.id)),
      );
      for (const [index, document] of documents.entries()) expect(document).toEqual(writes[index]!.document);
    });

    it('concurrent writes of one run keep an unbroken parent chain', async () => {
      const { provider, location } = await harness.setup();
      const run = createTestRun({ provider, location });
      const pending: Promise<{ id: string }>[] = [];
      for (let index = 0; index < 12; index += 1) {
        advanceTestRun(run);
        pending.push(run.state.writeCheckpoint({ trigger: 'task_completed' }));
      }
      const ids = (await Promise.all(pending)).map((entry) => entry.id);
      const listed = await provider.list(location, { branch: 'main' });
      expect(idsOf(listed)).toEqual(ids);
      expect(listed.map((entry) => entry.parentId)).toEqual([null, ...ids.slice(0, -1)]);
      expect(listed.map((entry) => entry.eventCount)).toEqual(ids.map((_, index) => 4 + index * 2));
    });

    it('several processes writing one location lose nothing', async (context) => {
      const writers = harness.options.concurrentWriters;
      if (!writers) {
        context.skip('no concurrentWriters option given; multi-process writing is not tested');
        return;
      }
      const { writers: count, perWriter } = harness.options.processWriters ?? { writers: 4, perWriter: 15 };
      const { provider, location } = await harness.setup();
      await writers.spawn(location, count, perWriter);
      const listed = await provider.list(location);
      expect(listed.length).toBe(count * perWriter);
      expect(new Set(idsOf(listed)).size).toBe(listed.length);
      const byLineage = new Map<string, CheckpointDocument[]>();
      for (const entry of listed) {
        const document = await readBack(provider, location, entry.id);
        byLineage.set(entry.lineageId, [...(byLineage.get(entry.lineageId) ?? []), document]);
      }
      expect(byLineage.size).toBe(count);
      for (const documents of byLineage.values()) {
        expect(documents.length).toBe(perWriter);
        const ids = documents.map((document) => document.metadata.id);
        expect(documents.map((document) => document.metadata.parentId)).toEqual([null, ...ids.slice(0, -1)]);
      }
    });
  });
}
