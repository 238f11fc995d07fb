import type { GrowingRun } from '@crewline/provider-testkit/fixtures';
import {
  type CheckpointWrite,
  createCheckpointWrite,
  encodeValue,
  type LeaseToken,
} from '@crewline/runtime-state';

/**
 * The next `count` checkpoints of `run` as the runtime would hand them over (one more event each,
 * each the parent of the next, the first a child of `parent`), without writing them.
 */
export function nextWrites(
  run: GrowingRun,
  count: number,
  parent?: CheckpointWrite,
  lease?: LeaseToken,
): CheckpointWrite[] {
  const writes: CheckpointWrite[] = [];
  let previous = parent;
  for (let index = 0; index < count; index += 1) {
    const { metadata, entities } = run.state.snapshot(run.step());
    const write = createCheckpointWrite({
      metadata: { ...metadata, parentId: previous?.metadata.id ?? null, eventCount: run.state.events.length },
      inputs: encodeValue(run.state.inputs),
      entities,
      events: run.state.events.slice(),
      parentEventCount: previous?.metadata.eventCount ?? 0,
      ...(lease === undefined ? {} : { lease }),
    });
    writes.push(write);
    previous = write;
  }
  return writes;
}
