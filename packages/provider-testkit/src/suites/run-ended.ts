import type { CheckpointWrite } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { growingRun } from '../fixtures/growing-crew.js';
import { readBackMismatches } from '../fixtures/incremental-storage.js';
import { nextWrites } from '../fixtures/next-writes.js';
import type { Harness } from '../harness.js';

const textsOf = (writes: readonly CheckpointWrite[]) =>
  new Map(writes.map((write) => [write.metadata.id, write.text()]));

/**
 * `runEnded`, for a provider that has it (the runtime calls it once a run that wrote to a location
 * ended): it lets go of what it kept for that run, never of what it stored, and the provider works on.
 */
export function describeRunEnded(harness: Harness): void {
  describe('runEnded (a run that wrote here ended)', () => {
    it('keeps every checkpoint readable, and the next run writes and reads as before', async () => {
      const { provider, location } = await harness.setup();
      if (provider.runEnded === undefined) return;
      const run = growingRun({ tasks: 3, outputBytes: 400 });
      const first = nextWrites(run, 3);
      for (const write of first) await provider.write(location, write);
      await provider.runEnded(location);
      const next = nextWrites(run, 2, first.at(-1));
      for (const write of next) await provider.write(location, write);
      await provider.runEnded(location);
      const listed = await provider.list(location);
      expect(listed.map((checkpoint) => checkpoint.id)).toEqual(
        [...first, ...next].map((write) => write.metadata.id),
      );
      expect(await readBackMismatches(provider, location, textsOf([...first, ...next]))).toEqual([]);
    });
  });
}
