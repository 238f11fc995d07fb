import { CrewlineError } from '@crewline/events';
import type { EntityKind, EntitySnapshot, LoadedCheckpoint } from '@crewline/runtime-state';

/** Which saved entity of a checkpoint an entity restores. */
export interface EntityLookup {
  kind: EntityKind;
  /** Names its snapshot may be saved under (its name, a flow's registered name). Default: any. */
  names?: readonly string[];
  /**
   * When no snapshot of `kind` carries one of `names`: `true` takes the first of its kind (a crew or
   * agent renamed since), `false` refuses (a flow of another class would not line up). Default false.
   */
  anyName?: boolean;
}

/**
 * The one "find this entity's snapshot" of every restore: the first saved entity of the kind whose
 * name (or registered name) is one of `names`, else (with `anyName`, or without `names`) the first
 * of its kind; otherwise a `not_found` error saying what the checkpoint holds.
 */
export function findEntitySnapshot(loaded: LoadedCheckpoint, lookup: EntityLookup): EntitySnapshot {
  const { kind, names } = lookup;
  const ofKind = loaded.document.entities.filter((entity) => entity.kind === kind);
  const named =
    names === undefined
      ? undefined
      : ofKind.find(
          (entity) =>
            names.includes(entity.name) ||
            (entity.registryName !== undefined && names.includes(entity.registryName)),
        );
  const snapshot = named ?? (names === undefined || lookup.anyName ? ofKind[0] : undefined);
  if (snapshot) return snapshot;
  const id = loaded.document.metadata.id;
  if (ofKind.length > 0) {
    const found = ofKind.map((entity) => `"${entity.name}"`).join(', ');
    throw new CrewlineError(
      'runtime',
      'not_found',
      `checkpoint ${id} holds ${kind} ${found}, not "${names?.[0]}"; restore it with that ${kind === 'flow' ? 'flow class (or register it in crewline.config.ts)' : `${kind}'s name`}`,
    );
  }
  const present =
    loaded.document.entities.map((entity) => `${entity.kind} "${entity.name}"`).join(', ') || 'nothing';
  throw new CrewlineError(
    'runtime',
    'not_found',
    `checkpoint ${id} holds no ${kind}${names?.[0] !== undefined ? ` named "${names[0]}"` : ''} (it holds ${present}); restore it with the class that wrote it`,
  );
}
