import type { EntityKind, EntitySnapshot, EntitySummary } from './document.js';
import type { SettledValues } from './settled-values.js';

/**
 * An entity of a run held as a snapshot that does not change: a crew or agent kickoff that finished
 * before the same object was kicked off again in the run, the work of a flow method completed before
 * a restore, or (`standIn`) saved work a restored run keeps in the place of the entity that takes it
 * up again (see `CheckpointableEntity.standIn`). Every checkpoint of the run holds it. `summary`
 * defaults to the snapshot's kind, id and name.
 * (Described here rather than typed as `CheckpointableEntity`: run-entities.ts, which defines it,
 * imports this file.)
 */
export function keptEntity(
  snapshot: EntitySnapshot,
  summary: EntitySummary = { kind: snapshot.kind, id: snapshot.id, name: snapshot.name },
  options: { standIn?: boolean } = {},
): {
  readonly entityKind: EntityKind;
  readonly entityId: string;
  readonly entityName: string;
  readonly standIn?: boolean;
  snapshotEntity(settled?: SettledValues): EntitySnapshot;
  summarizeEntity(): EntitySummary;
} {
  return {
    entityKind: snapshot.kind,
    entityId: snapshot.id,
    entityName: snapshot.name,
    ...(options.standIn === true ? { standIn: true } : {}),
    // Never changed: settled in the run, so it is redacted and stored once.
    snapshotEntity: (settled) => settled?.settle(snapshot) ?? snapshot,
    summarizeEntity: () => summary,
  };
}
