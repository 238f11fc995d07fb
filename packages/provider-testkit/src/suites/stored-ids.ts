import type { CrewlineError } from '@crewline/events';
import {
  type CheckpointProvider,
  type CheckpointWrite,
  createCheckpointWrite,
} from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { expectCrewlineError } from '../assertions.js';
import { type GrowingRun, growingRun } from '../fixtures/growing-crew.js';
import { readBackMismatches } from '../fixtures/incremental-storage.js';
import { nextWrites } from '../fixtures/next-writes.js';
import type { Harness } from '../harness.js';

/**
 * The run's next checkpoint after `parent`, stored under `id` (an id already stored, with another
 * parent and other content): what a replayed or forged write hands a provider.
 */
function nextUnderId(run: GrowingRun, parent: CheckpointWrite, id: string): CheckpointWrite {
  const [next] = nextWrites(run, 1, parent);
  return createCheckpointWrite({
    metadata: { ...next!.metadata, id },
    inputs: next!.document.inputs,
    entities: next!.document.entities,
    events: next!.document.events,
    parentEventCount: next!.parentEventCount,
  });
}

/** What a reader sees of a location: every listed checkpoint, the latest, and each one's text. */
async function observe(provider: CheckpointProvider, location: string, writes: readonly CheckpointWrite[]) {
  return {
    listed: await provider.list(location),
    latest: await provider.latest(location),
    mismatches: await readBackMismatches(
      provider,
      location,
      new Map(writes.map((write) => [write.metadata.id, write.text()])),
    ),
  };
}

function expectDuplicate(error: CrewlineError, id: string): void {
  expect(error.details?.duplicateId, `the conflict's details name the stored id: ${error.message}`).toBe(id);
}

/**
 * Another checkpoint under an id that is already stored: a conflict, never a second checkpoint under
 * one id (a reader could not tell which one the id means) nor a replaced one (its children would
 * name a parent that is gone).
 */
export function describeStoredIds(harness: Harness): void {
  describe('ids already stored', () => {
    it('write of another checkpoint under a stored id rejects with conflict and leaves the stored one as it was', async () => {
      const { provider, location } = await harness.setup();
      const run = growingRun({ tasks: 2 });
      const [root, child] = nextWrites(run, 2);
      await provider.write(location, root!);
      await provider.write(location, child!);
      const before = await observe(provider, location, [root!, child!]);
      expect(before.mismatches).toEqual([]);
      const clashing = nextUnderId(run, child!, root!.metadata.id);
      expectDuplicate(
        await expectCrewlineError(
          () => provider.write(location, clashing),
          ['conflict'],
          'write of another checkpoint under a stored id',
        ),
        root!.metadata.id,
      );
      if (provider.capabilities.syncWrite && provider.writeSync) {
        expectDuplicate(
          await expectCrewlineError(
            () => provider.writeSync!(location, clashing),
            ['conflict'],
            'writeSync of another checkpoint under a stored id',
          ),
          root!.metadata.id,
        );
      }
      expect(await observe(provider, location, [root!, child!])).toEqual(before);
    });

    it('writeBatch with a checkpoint under a stored id rejects with conflict and stores at most the ones before it', async (context) => {
      const { provider, location } = await harness.setup();
      const { writeBatch } = provider;
      if (writeBatch === undefined) {
        context.skip('the provider has no writeBatch');
        return;
      }
      const run = growingRun({ tasks: 2 });
      const [root] = nextWrites(run, 1);
      await provider.write(location, root!);
      const before = await observe(provider, location, [root!]);
      const [child] = nextWrites(run, 1, root);
      const clashing = nextUnderId(run, child!, root!.metadata.id);
      expectDuplicate(
        await expectCrewlineError(
          () => writeBatch.call(provider, location, [child!, clashing]),
          ['conflict'],
          'writeBatch with a checkpoint under a stored id',
        ),
        root!.metadata.id,
      );
      const after = await observe(provider, location, [root!]);
      expect(after.mismatches).toEqual([]);
      const childStored = after.listed.length === 2;
      // All of the group or the prefix before the clash: the root as it was, maybe the child after it.
      expect(after.listed.map((checkpoint) => [checkpoint.id, checkpoint.parentId])).toEqual(
        childStored
          ? [
              [root!.metadata.id, null],
              [child!.metadata.id, root!.metadata.id],
            ]
          : [[root!.metadata.id, null]],
      );
      expect(after.listed[0]).toEqual(before.listed[0]);
      expect(after.latest?.id).toBe(childStored ? child!.metadata.id : root!.metadata.id);
    });
  });
}
