// A strict checkpoint (state.checkpoint(), written synchronously) taken while automatic checkpoints
// of the same run are still queued for a background write (JsonProvider, capabilities.backgroundWrites).
import { join } from 'node:path';
import { CheckpointCompletedEvent, EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { RuntimeState } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { allFiles, checkpointFiles, readCheckpoint, temporaryDirectory } from '../e2e/support/fixtures.js';
import { emptyFlowEntity } from './test-support/empty-flow-entity.js';
import { SlowJsonProvider } from './test-support/slow-json-provider.js';

let directory: { path: string; cleanup: () => void };
beforeEach(() => {
  directory = temporaryDirectory('crewline-strict-after-background-');
});
afterEach(() => directory.cleanup());

/** The checkpoints on disk, oldest first, as `trigger id parent`. */
function onDisk(location: string): { trigger: string; id: string; parentId: string | null }[] {
  const files = checkpointFiles(location);
  expect(allFiles(location)).toHaveLength(files.length);
  return files.map((file) => {
    const { metadata } = readCheckpoint(file);
    return { trigger: metadata.trigger, id: metadata.id, parentId: metadata.parentId };
  });
}

describe('a strict checkpoint while automatic ones are queued for the background', () => {
  it('lands after them: never on disk without its parent, and the last one stored stays the newest', async () => {
    const location = join(directory.path, 'cp');
    const provider = new JsonProvider();
    expect(provider.capabilities.backgroundWrites).toBe(true);
    const state = new RuntimeState({ entities: [emptyFlowEntity], provider, location, bus: new EventBus() });
    // What the automatic listener does on two events (see auto-checkpoint.ts): queued, not awaited.
    const automatic = [
      state.writeCheckpoint({ trigger: 'task_started' }),
      state.writeCheckpoint({ trigger: 'task_completed' }),
    ];
    const reference = state.checkpoint();

    // Right when checkpoint() returns, its parents are on disk too, in order.
    const now = onDisk(provider.resolveLocation(location));
    expect(now.map((checkpoint) => checkpoint.trigger)).toEqual(['task_started', 'task_completed', 'manual']);
    expect(now[1]!.parentId).toBe(now[0]!.id);
    expect(now[2]!.parentId).toBe(now[1]!.id);

    const stored = await Promise.all(automatic);
    expect(stored.map((checkpoint) => checkpoint.id)).toEqual([now[0]!.id, now[1]!.id]);
    await state.durable();
    expect(onDisk(provider.resolveLocation(location))).toEqual(now);
    expect(state.lastStored?.reference).toBe(reference);
    expect((await provider.latest(provider.resolveLocation(location)))?.reference).toBe(reference);
  });

  it('writes a group in flight again, whole, and reports each checkpoint once, in lineage order', async () => {
    const location = join(directory.path, 'cp');
    const provider = new SlowJsonProvider(50);
    const bus = new EventBus();
    const completed: string[] = [];
    bus.on(CheckpointCompletedEvent, (_source: unknown, event: CheckpointCompletedEvent) => {
      completed.push(event.checkpointId);
    });
    const state = new RuntimeState({ entities: [emptyFlowEntity], provider, location, bus });
    const automatic = [
      state.writeCheckpoint({ trigger: 'task_started' }),
      state.writeCheckpoint({ trigger: 'task_completed' }),
    ];
    // The group starts at the end of this turn of the event loop and waits in the provider.
    await new Promise((resolve) => setImmediate(resolve));
    expect(provider.pending).toBeGreaterThan(0);
    const reference = state.checkpoint();
    const now = onDisk(provider.resolveLocation(location));
    expect(now.map((checkpoint) => checkpoint.trigger)).toEqual(['task_started', 'task_completed', 'manual']);

    await Promise.all(automatic);
    await state.durable();
    expect(provider.pending).toBe(0);
    expect(onDisk(provider.resolveLocation(location))).toEqual(now);
    expect(completed).toEqual(now.map((checkpoint) => checkpoint.id));
    expect(state.lastStored?.reference).toBe(reference);
  });
});
