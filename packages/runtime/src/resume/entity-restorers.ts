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
  /** The answer to the question a paused flow waits for (`flow.ask()`); only flows take one. */
  humanInput?: string;
  /** Where code-defined parts (flows, custom tools and models) are found by name. */
  registry: ProjectRegistry;
  /** The bus the continued run emits on. */
  bus?: EventBus;
  /** What to do when another process is continuing the same run (see `CheckpointConfigInput`). */
  onConflict?: 'error' | 'fork';
}

export interface RestoredRunResult {
  /** The final output as text (for a paused flow: what it is waiting for). */
  output: string;
  /** Set when the run ended paused, waiting for a person's answer (a flow's `ask()`). */
  pause?: RunPause;
}

/** A run that stopped to ask a person: continue it with `humanInput` set to the answer. */
export interface RunPause {
  /** The method that asked. */
  methodName: string;
  /** The question. */
  message: string;
  kind: 'feedback' | 'input';
  /** The checkpoint to continue with the answer, when one was written. */
  resumeFrom?: string;
}

/** Rebuilds one kind of entity from a checkpoint and runs it to the end. */
export type EntityRestorer = (request: RestoreRequest) => Promise<RestoredRunResult>;

/** Restorers of entities that never ask a person refuse an answer instead of ignoring it. */
export function refuseHumanInput(request: RestoreRequest): void {
  if (request.humanInput === undefined) return;
  throw new CrewlineError(
    'runtime',
    'invalid_argument',
    `checkpoint ${request.loaded.checkpoint.id} holds a ${request.snapshot.kind} ("${request.snapshot.name}"), which does not wait for an answer; an answer (humanInput, --answer) only continues a paused flow`,
  );
}
