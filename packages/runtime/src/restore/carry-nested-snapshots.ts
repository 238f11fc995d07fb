import type { CheckpointDocument, EntitySnapshot, LoadedCheckpoint } from '@crewline/runtime-state';
import { keptEntity, parseFlowData } from '@crewline/runtime-state/internal';
import { claimSavedEntity, claimSnapshot } from '../checkpointing/claim-snapshot.js';
import { joinRun } from '../checkpointing/entity-joins.js';
import type { Run } from '../checkpointing/run.js';
import type { FlowExecution, NestedEntity } from '../flow/run-progress.js';

/**
 * Crews and agents that ran inside methods which already completed are not run again, so nobody
 * claims their saved snapshots: claim them here (so a later crew of the same name gets its own) and
 * keep them in the run, so every checkpoint still holds every entity of the run.
 */
export function carryNestedSnapshots(run: Run, execution: FlowExecution, restored: LoadedCheckpoint): void {
  const carried = claimNested(execution.nestedEntities, (entity) => run.takeSavedEntity(entity));
  for (const snapshot of carried) {
    const summary = restored.document.metadata.entities.find(
      (entity) => entity.kind === snapshot.kind && entity.id === snapshot.id,
    );
    joinRun(run.state, keptEntity(snapshot, summary));
  }
}

/**
 * The saved snapshots a continuation of `document` carries as they are, never running them again:
 * for a flow, those of the crews, agents and flows its completed methods ran, found as the restored
 * run finds them (the root takes its own first, then `carryNestedSnapshots` claims these); then, for
 * each flow kicked off in a method that runs again (which takes up its own snapshot), those of its
 * own completed methods. None for a crew or an agent, which continue every part they saved.
 */
export function carriedSnapshots(document: CheckpointDocument): EntitySnapshot[] {
  const root = document.entities[0];
  if (root?.kind !== 'flow') return [];
  const unclaimed = [...document.entities];
  const claim = (entity: NestedEntity) => claimSavedEntity(unclaimed, entity, { started: [] });
  claimSnapshot(unclaimed, root.kind, root.name, undefined, { started: [] });
  const carried = claimNested(parseFlowData(root).execution.nestedEntities, claim);
  for (const flow of unclaimed.filter((snapshot) => snapshot.kind === 'flow')) {
    // Carried already as the work of a flow around it that is not run again.
    if (!unclaimed.includes(flow)) continue;
    unclaimed.splice(unclaimed.indexOf(flow), 1);
    carried.push(...claimNested(parseFlowData(flow).execution.nestedEntities, claim));
  }
  return carried;
}

/**
 * The snapshots `claim` hands out for `nested`, in order (one it has none for is skipped). Each is
 * the snapshot saved under the entity's id: crews of one name that ran at the same time joined the
 * run in no set order. Only checkpoints written before ids were recorded go by name and order.
 */
function claimNested(
  nested: readonly NestedEntity[],
  claim: (entity: NestedEntity) => EntitySnapshot | undefined,
): EntitySnapshot[] {
  return nested.flatMap((entity) => claim(entity) ?? []);
}
