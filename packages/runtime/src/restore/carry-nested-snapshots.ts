import type { CheckpointableEntity, EntitySummary, LoadedCheckpoint } from '@crewline/runtime-state';
import type { Run } from '../checkpointing/run.js';
import type { FlowExecution } from '../flow/run-progress.js';

/**
 * Crews and agents that ran inside methods which already completed are not run again, so nobody
 * claims their saved snapshots: claim them here (so a later crew of the same name gets its own) and
 * keep them in the run, so every checkpoint still holds every entity of the run.
 */
export function carryNestedSnapshots(run: Run, execution: FlowExecution, restored: LoadedCheckpoint): void {
  for (const nested of execution.nestedEntities) {
    const snapshot = run.takeRestoredSnapshot(nested.kind, nested.name);
    if (!snapshot) continue;
    const summary: EntitySummary = restored.document.metadata.entities.find(
      (entity) => entity.kind === snapshot.kind && entity.id === snapshot.id,
    ) ?? { kind: snapshot.kind, id: snapshot.id, name: snapshot.name };
    const preserved: CheckpointableEntity = {
      entityKind: snapshot.kind,
      entityId: snapshot.id,
      entityName: snapshot.name,
      // Read from the checkpoint and never changed again: settled in the run, stored once.
      snapshotEntity: (settled) => settled?.settle(snapshot) ?? snapshot,
      summarizeEntity: () => summary,
    };
    run.state.addEntity(preserved);
  }
}
