import { CrewlineError, type EventBus } from '@crewline/events';
import type { EntityKind, EntitySnapshot, LoadedCheckpoint } from '@crewline/runtime-state';
import type { ProjectRegistry } from '../registry/project-config.js';

/** What a restorer is asked to continue. */
export interface RestoreRequest {
  /** The checkpoint, with edited task outputs already applied to its document. */
  loaded: LoadedCheckpoint;
  /** The entity that owns the run (the first entity of the checkpoint). */
  snapshot: EntitySnapshot;
  mode: 'resume' | 'fork';
  /** Fork only: the branch to write on (already chosen and validated). */
  branch?: string;
  /** New kickoff inputs; they re-template pending work only. */
  inputs?: Record<string, unknown>;
  /** Where code-defined parts (flows, custom tools and models) are found by name. */
  registry: ProjectRegistry;
  /** The bus the continued run emits on. */
  bus?: EventBus;
}

export interface RestoredRunResult {
  /** The final output as text. */
  output: string;
}

/** Rebuilds one kind of entity from a checkpoint and runs it to the end. */
export type EntityRestorer = (request: RestoreRequest) => Promise<RestoredRunResult>;

const restorers = new Map<EntityKind, EntityRestorer>();

/** Registers how entities of `kind` are continued (the flow module registers `'flow'`). */
export function registerEntityRestorer(kind: EntityKind, restorer: EntityRestorer): void {
  restorers.set(kind, restorer);
}

export function entityRestorer(kind: EntityKind): EntityRestorer {
  const restorer = restorers.get(kind);
  if (!restorer) {
    throw new CrewlineError(
      'runtime',
      'not_rebuildable',
      `this process cannot continue a ${kind} checkpoint: nothing registered a ${kind} restorer; import @crewline/runtime (its ${kind} support) before continuing`,
    );
  }
  return restorer;
}
