import type { EventRecord } from '@crewline/events';
import type { CheckpointMetadata, EntitySnapshot } from './document.js';
import { newCheckpointId } from './ids.js';
import type { CheckpointableEntity } from './run-entities.js';
import type { SettledValues } from './settled-values.js';
import type { UnchangedSnapshots } from './unchanged-snapshots.js';
import type { Lineage } from './write/run-lineage.js';

/** What a checkpoint of a run is taken of (RuntimeState, seen from here). */
export interface SnapshotSource {
  readonly entities: readonly CheckpointableEntity[];
  readonly events: readonly EventRecord[];
  readonly lineage: Readonly<Lineage>;
  readonly settled: SettledValues;
}

/**
 * The metadata and entities of a checkpoint of `run` as it is now (`RuntimeState.snapshot`), naming
 * `parentId` as its parent. `unchanged` holds each entity's last redacted snapshot, given again
 * while its content stays the same.
 */
export function snapshotRun(
  run: SnapshotSource,
  unchanged: UnchangedSnapshots,
  trigger: string,
  parentId: string | null,
): { metadata: CheckpointMetadata; entities: EntitySnapshot[] } {
  const entities = run.entities.map((entity) =>
    unchanged.redacted(entity, entity.snapshotEntity(run.settled), run.settled),
  );
  const metadata: CheckpointMetadata = {
    id: newCheckpointId(Date.now(), run.lineage.checkpointId),
    createdAt: new Date().toISOString(),
    lineageId: run.lineage.lineageId,
    parentId,
    branch: run.lineage.branch,
    trigger,
    entities: run.entities.map((entity) => entity.summarizeEntity()),
    eventCount: run.events.length,
  };
  return { metadata, entities };
}
