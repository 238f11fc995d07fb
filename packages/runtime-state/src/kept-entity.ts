import type { EntityKind, EntitySnapshot, EntitySummary } from './document.js';
import type { SettledValues } from './settled-values.js';

/**
 * An entity of a run that will not change again, as a snapshot taken of it once: a crew or agent
 * kickoff that finished before the same object was kicked off again in the run, or one that ran in
 * a flow method completed before a restore. Every checkpoint of the run still holds it.
 * (Described here rather than typed as `CheckpointableEntity`: runtime-state.ts imports this file.)
 */
export function keptEntity(
  snapshot: EntitySnapshot,
  summary: EntitySummary,
): {
  readonly entityKind: EntityKind;
  readonly entityId: string;
  readonly entityName: string;
  snapshotEntity(settled?: SettledValues): EntitySnapshot;
  summarizeEntity(): EntitySummary;
} {
  return {
    entityKind: snapshot.kind,
    entityId: snapshot.id,
    entityName: snapshot.name,
    // Never changed again: settled in the run, so it is redacted and stored once.
    snapshotEntity: (settled) => settled?.settle(snapshot) ?? snapshot,
    summarizeEntity: () => summary,
  };
}
