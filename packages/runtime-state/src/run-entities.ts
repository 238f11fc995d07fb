import type { EntityKind, EntitySnapshot, EntitySummary } from './document.js';
import { stateError } from './errors.js';
import { keptEntity } from './kept-entity.js';
import type { SettledValues } from './settled-values.js';

/** An entity (crew, flow, standalone agent) that can be written into a checkpoint. */
export interface CheckpointableEntity {
  readonly entityKind: EntityKind;
  readonly entityId: string;
  readonly entityName: string;
  /**
   * JSON-safe snapshot of the entity now. Values must be plain JSON (use `encodeValue` for user data).
   * `settled` is the run's (see {@link SettledValues}): pass the parts that will not change again
   * through `settled.settle` and give the same objects back in later snapshots, so that they are
   * redacted once and stored once.
   */
  snapshotEntity(settled?: SettledValues): EntitySnapshot;
  summarizeEntity(): EntitySummary;
  /**
   * True for the saved snapshot a restored run holds in the place of an entity that has not taken it
   * up again yet (a crew of a flow method due to run again): the entity that joins under its id
   * replaces it, in its place. Default `false`: a second object under one id is refused (see
   * RuntimeState.addEntity).
   */
  readonly standIn?: boolean;
  /**
   * Gives the entity an id of its own, when another object of the run it joins has its id already
   * (a flow's id is its state id, which two Flow objects kicked off for one state share). Optional:
   * without it, such a second object is refused.
   */
  renewEntityId?(): void;
}

/**
 * Adds `entity` to a run's `entities`, in the place of a stand-in under its id: see
 * `RuntimeState.addEntity`, which calls this.
 */
export function addEntityToRun(entities: CheckpointableEntity[], entity: CheckpointableEntity): void {
  const standIn = entities.findIndex((known) => known.standIn === true && known.entityId === entity.entityId);
  if (standIn >= 0 && entity.standIn !== true) {
    entities[standIn] = entity;
    return;
  }
  let existing = entities.find((known) => known.entityId === entity.entityId);
  if (existing !== undefined && existing !== entity && entity.renewEntityId !== undefined) {
    entity.renewEntityId();
    existing = entities.find((known) => known.entityId === entity.entityId);
  }
  if (existing === undefined) entities.push(entity);
  else if (existing !== entity) {
    // Kept, the second would be missing from every checkpoint of the run, and a resume would pay for
    // its work again.
    throw stateError(
      'invalid_state',
      `two entities of one run have the id "${entity.entityId}" (${existing.entityKind} "${existing.entityName}" and ${entity.entityKind} "${entity.entityName}"): its checkpoints would hold only the first; give each Crew, Agent and Flow an id of its own (do not copy one object's id onto another)`,
    );
  }
}

/**
 * Replaces `entity` in a run's `entities` by what its earlier kickoff left, kept as it is now: see
 * `RuntimeState.keepEarlierKickoff`, which calls this.
 */
export function keepEarlierKickoffInRun(
  entities: CheckpointableEntity[],
  entity: CheckpointableEntity,
  settled: SettledValues,
): boolean {
  const index = entities.indexOf(entity);
  if (index >= 0) {
    entities[index] = keptEntity(entity.snapshotEntity(settled), entity.summarizeEntity());
    return true;
  }
  // Its id names an entity the run holds already: what a restored run carries of this very
  // object's earlier kickoff (saved work of a method that completed). This kickoff is another.
  return entities.some((existing) => existing.entityId === entity.entityId);
}
