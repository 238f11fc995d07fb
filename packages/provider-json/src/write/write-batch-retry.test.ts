// writeBatch when a concurrent prune removes the branch directory it just created (the prune of
// another writer emptied it): like write(), it makes the directory again and the batch still lands.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckpointWrite, createTestRun } from '@crewline/provider-testkit/fixtures';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JsonProvider } from '../json-provider.js';
import type { AtomicFile } from './atomic-write.js';

/** How many group writes remove their branch directory first (what a concurrent prune does). */
const removals = vi.hoisted(() => ({ left: 0 }));

vi.mock('./atomic-write.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('./atomic-write.js')>();
  return {
    ...original,
    writeFilesAtomic: (
      files: readonly AtomicFile[],
      options: Parameters<typeof original.writeFilesAtomic>[1],
    ) => {
      if (removals.left > 0) {
        removals.left -= 1;
        // Between the directory's creation and the temp files' open, as a prune's rmdir would.
        rmSync(files[0]!.directory, { recursive: true, force: true });
      }
      return original.writeFilesAtomic(files, options);
    },
  };
});

let location: string;
beforeEach(() => {
  location = mkdtempSync(join(tmpdir(), 'crewline-json-batch-'));
});
afterEach(() => {
  removals.left = 0;
  rmSync(location, { recursive: true, force: true });
});

describe('JsonProvider.writeBatch', () => {
  it('lands when the branch directory is removed between its creation and the write', async () => {
    const provider = new JsonProvider();
    const run = createTestRun({ provider, location, branch: 'pruned-branch' });
    const writes = [buildCheckpointWrite({ run }), buildCheckpointWrite({ run, trigger: 'task_started' })];
    removals.left = 1;
    const stored = await provider.writeBatch(location, writes);
    expect(removals.left).toBe(0);
    expect(stored.map((checkpoint) => checkpoint.id)).toEqual(writes.map((write) => write.metadata.id));
    const listed = await provider.list(location);
    expect(listed.map((checkpoint) => checkpoint.id).sort()).toEqual(
      stored.map((checkpoint) => checkpoint.id).sort(),
    );
  });

  it('gives up with write_failed when the directory vanishes again on the second try', async () => {
    const provider = new JsonProvider();
    const run = createTestRun({ provider, location, branch: 'pruned-branch' });
    removals.left = 2;
    await expect(provider.writeBatch(location, [buildCheckpointWrite({ run })])).rejects.toMatchObject({
      code: 'write_failed',
    });
  });
});
