import type { CheckpointProvider, CheckpointWrite } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { growingRun } from '../fixtures/growing-crew.js';
import { readBackMismatches } from '../fixtures/incremental-storage.js';
import { nextWrites } from '../fixtures/next-writes.js';
import type { Harness } from '../harness.js';

type BatchProvider = CheckpointProvider & Required<Pick<CheckpointProvider, 'writeBatch'>>;

/** Texts of `writes` by id, as `readBackMismatches` compares them. */
function textsOf(writes: readonly CheckpointWrite[]): Map<string, string> {
  return new Map(writes.map((write) => [write.metadata.id, write.text()]));
}

/**
 * `writeBatch`, for a provider that has it (the runtime hands it the automatic checkpoints queued
 * between two model or tool calls): stored in order, each continuing the one before it.
 */
export function describeWriteBatch(harness: Harness): void {
  describe('writeBatch (groups of checkpoints)', () => {
    async function setup(): Promise<{ provider: BatchProvider; location: string } | undefined> {
      const { provider, location } = await harness.setup();
      return provider.writeBatch === undefined
        ? undefined
        : { provider: provider as BatchProvider, location };
    }

    it('stores a group in order, each checkpoint naming the one before it, read back byte for byte', async () => {
      const store = await setup();
      if (store === undefined) return;
      const { provider, location } = store;
      const run = growingRun({ tasks: 5, outputBytes: 900 });
      const first = nextWrites(run, 4);
      const second = nextWrites(run, 3, first.at(-1));
      const stored = [
        ...(await provider.writeBatch(location, first)),
        ...(await provider.writeBatch(location, second)),
      ];
      const all = [...first, ...second];
      expect(stored.map((checkpoint) => checkpoint.id)).toEqual(all.map((write) => write.metadata.id));
      const listed = await provider.list(location);
      expect(listed.map((checkpoint) => [checkpoint.id, checkpoint.parentId])).toEqual(
        all.map((write) => [write.metadata.id, write.metadata.parentId]),
      );
      expect(await readBackMismatches(provider, location, textsOf(all))).toEqual([]);
    });

    it('checks every checkpoint of a group before storing any', async () => {
      const store = await setup();
      if (store === undefined) return;
      const { provider, location } = store;
      const run = growingRun({ tasks: 2 });
      const [good, bad] = nextWrites(run, 2);
      const badBranch = { ...bad!, metadata: { ...bad!.metadata, branch: '../escape' } };
      await expect(provider.writeBatch(location, [good!, badBranch])).rejects.toThrow(/branch/);
      expect(await provider.list(location)).toEqual([]);
    });
  });
}
