import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type BaseEvent,
  CheckpointCompletedEvent,
  CheckpointForkCompletedEvent,
  CrewlineError,
  eventBus as defaultBus,
  type EventBus,
  type RunState,
} from '@crewline/events';
import {
  type CheckpointConfigInput,
  type EntityKind,
  type EntitySnapshot,
  type LoadedCheckpoint,
  type ProviderRegistry,
  toJsonSafe,
} from '@crewline/runtime-state';
import { Agent } from '../agent/agent.js';
import { forkBranch } from '../checkpointing/fork-branch.js';
import { Run } from '../checkpointing/run.js';
import { Crew } from '../crew/crew.js';
import { editTaskOutputsInDocument } from '../crew/task-output-edit.js';
import { Flow } from '../flow/flow.js';
import { registeredClassFor } from '../flow/flow-snapshot.js';
import { type ProjectRegistry, projectRegistry } from '../project-config/project-config.js';
import { checkContinuation } from './check-continuation.js';
import { withEditedDocument } from './edited-checkpoint.js';
import { loadRestoreTarget } from './load-restore-target.js';

export interface ContinueOptions {
  /** A JSON file, `db-path#id`, `postgres-url#id`, a directory/database (its latest), or an id/unique prefix with `defaultLocation`. */
  reference: string;
  /** Where a bare id or prefix is looked up. Default: none. */
  defaultLocation?: string;
  /** `'resume'` continues on the checkpoint's branch; `'fork'` on a new lineage and branch. */
  mode: 'resume' | 'fork';
  /** Fork only: the new branch. Default: generated (`fork/<id>-<hex>`). */
  branch?: string;
  /**
   * Resume of a flow only: the method a re-run runs again (`crewline checkpoint flows rerun --from`,
   * the checkpoint `findRerunPoint` picked). Its executions due to run start from scratch: work they
   * had started when the checkpoint was taken (beside a method running at the same time) is not
   * handed back, and the new branch it moves to (off a checkpoint its run went past) is said at info
   * level, not warned about. Default: none (every execution continues its saved work).
   */
  rerunFrom?: string;
  /** New kickoff inputs; they re-template pending tasks only. Default: the saved inputs. */
  inputs?: Record<string, unknown>;
  /**
   * Flat task index (across the checkpoint's crews, in order) → edited raw output. The later tasks of
   * its crew run again; in a flow, so do the crews its method started after it, never a parallel
   * method's (see `editTaskOutputsInDocument`).
   */
  taskOutputs?: Record<number, string>;
  /**
   * The answer to the question a paused flow waits for (its `ask()`); the flow continues with it.
   * Default: none (a paused flow asks again and stays paused). Refused for crews and agents.
   */
  humanInput?: string;
  /** Code-defined parts from `crewline.config.ts` (layered over what the process registered). */
  registry?: ProjectRegistry;
  /**
   * Where the checkpoint's provider is found (the entry that claims `reference`) and the provider its
   * stored setting names is rebuilt from: `providerRegistry(config.providers)` for the providers of
   * `crewline.config.ts`. Default: the built-ins (JSON, SQLite, Postgres).
   */
  providers?: ProviderRegistry;
  /** Every event of the continued run, for live progress. */
  onEvent?: (event: BaseEvent) => void;
  /** The bus the run emits on. Default: the process-wide `eventBus`. */
  bus?: EventBus;
  /**
   * When another process is continuing the same run (stores that fence lineage heads): `'error'`
   * (default) rejects with `conflict` naming the holder; `'fork'` continues on a new branch.
   */
  onConflict?: 'error' | 'fork';
  /**
   * The caller read this checkpoint as the latest of its run before naming it by its id (a command
   * line resolving a location to its latest): a continuation of the run found since then is someone
   * else's, and the resume is refused with a `conflict` rather than moved to a new branch, as it is
   * when `reference` names the location itself. Default `false`: the reference is judged as read
   * here (see `RestoredCheckpoint.headWhenRead`).
   */
  readAsLatest?: boolean;
}

export interface ContinueResult {
  kind: EntityKind;
  name: string;
  /** The final output as text. */
  output: string;
  /** The branch the continued run wrote on. */
  branch: string;
  /** Reference of the last checkpoint the continued run wrote, if it wrote any. */
  lastCheckpoint?: string;
  /** Set when the run stopped to ask a person (a flow's `ask()`): continue with `humanInput`. */
  pause?: RunPause;
}

/** The continuation each async context belongs to (see the event filter in continueFromCheckpoint). */
const continuationScope = new AsyncLocalStorage<symbol>();

/**
 * Resumes or forks whatever a checkpoint holds — a crew, a standalone agent, or a flow — and runs it
 * to the end. Used by the CLI and TUI.
 */
export async function continueFromCheckpoint(options: ContinueOptions): Promise<ContinueResult> {
  if (options.mode !== 'resume' && options.mode !== 'fork') {
    throw new CrewlineError(
      'runtime',
      'invalid_argument',
      `mode must be 'resume' or 'fork', got ${JSON.stringify(options.mode)}`,
    );
  }
  const bus = options.bus ?? defaultBus;
  const registry = projectRegistry(options.registry);
  let loaded = await loadRestoreTarget(options.reference, {
    bus,
    ...(options.providers ? { providers: options.providers } : {}),
    ...(options.defaultLocation !== undefined ? { defaultLocation: options.defaultLocation } : {}),
  });
  if (options.readAsLatest === true) loaded = { ...loaded, headWhenRead: true };
  if (options.taskOutputs && Object.keys(options.taskOutputs).length > 0) {
    loaded = withEditedDocument(loaded, editTaskOutputsInDocument(loaded.document, options.taskOutputs));
  }
  const snapshot = loaded.document.entities[0];
  if (!snapshot) {
    throw new CrewlineError(
      'runtime',
      'corrupt_checkpoint',
      `checkpoint ${loaded.checkpoint.id} holds no entity to continue`,
    );
  }
  checkContinuation(loaded.document, options);
  const requestedBranch =
    options.mode === 'fork' ? forkBranch(loaded, options.branch) : loaded.document.metadata.branch;
  // A resume moves to a new branch when its checkpoint was continued already (see Run's claim).
  let branch = requestedBranch;
  let lastCheckpoint: string | undefined;
  // Only this continuation's events: another one running in the process at the same time (two forks
  // started from the explorer) emits on the same bus, and its checkpoints are not ours. Ours are
  // those emitted in this continuation's async context, and those emitted from outside it into a run
  // it started (a signal, delivered by the process's listener): the runs are known by their state
  // from the moment they start, so a signal that comes before a run's first event is ours too.
  const token = Symbol('continuation');
  const ourRuns = new WeakSet<RunState>();
  const report = (event: BaseEvent) => {
    // By type, not instanceof: the bus is shared with other copies of @crewline/events.
    if (event.type === CheckpointForkCompletedEvent.type)
      branch = (event as CheckpointForkCompletedEvent).branch;
    if (event.type === CheckpointCompletedEvent.type) {
      const completed = event as CheckpointCompletedEvent;
      if (completed.branch === branch) lastCheckpoint = completed.reference;
    }
    options.onEvent?.(event);
  };
  const unsubscribeHere = bus.onAny((_source: unknown, event: BaseEvent) => {
    if (continuationScope.getStore() === token) report(event);
  });
  // Declared with the state: called for events inside a run only.
  const unsubscribeOutside = bus.onAny((_source: unknown, event: BaseEvent, state: RunState) => {
    if (continuationScope.getStore() !== token && ourRuns.has(state)) report(event);
  });
  const unsubscribe = () => {
    unsubscribeHere();
    unsubscribeOutside();
  };
  try {
    const request: RestoreRequest = {
      loaded,
      snapshot,
      mode: options.mode,
      ...(options.mode === 'fork' ? { branch: requestedBranch } : {}),
      ...(options.inputs ? { inputs: options.inputs } : {}),
      ...(options.humanInput !== undefined ? { humanInput: options.humanInput } : {}),
      ...(options.onConflict !== undefined ? { onConflict: options.onConflict } : {}),
      ...(options.mode === 'resume' && options.rerunFrom !== undefined
        ? { rerunFrom: options.rerunFrom }
        : {}),
      registry,
      bus,
    };
    const restorer = restorers[snapshot.kind];
    if (restorer === undefined) {
      throw new CrewlineError(
        'runtime',
        'corrupt_checkpoint',
        `checkpoint ${loaded.checkpoint.id} holds a ${JSON.stringify(snapshot.kind)}, which is not a crew, flow or agent; it cannot be continued`,
      );
    }
    const result = await continuationScope.run(token, () =>
      Run.watchStarts(
        (run) => ourRuns.add(run.state),
        () => restorer(request),
      ),
    );
    return {
      kind: snapshot.kind,
      name: snapshot.name,
      output: result.output,
      branch,
      ...(lastCheckpoint !== undefined ? { lastCheckpoint } : {}),
      ...(result.pause ? { pause: result.pause } : {}),
    };
  } finally {
    unsubscribe();
  }
}

/** What a restorer is asked to continue. */
interface RestoreRequest {
  /** The checkpoint, with edited task outputs already applied to its document (the stored one kept: see withEditedDocument). */
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
  /** See `ContinueOptions.rerunFrom`. */
  rerunFrom?: string;
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
type EntityRestorer = (request: RestoreRequest) => Promise<{ output: string; pause?: RunPause }>;

const restoreCrew: EntityRestorer = async (request) => {
  refuseHumanInput(request);
  const crew = await Crew.fromLoaded(request.loaded, continuation(request), {
    registry: request.registry,
    name: request.snapshot.name,
    ...(request.mode === 'fork' ? { fork: { branch: request.branch } } : {}),
  });
  const output = await crew.kickoff({
    ...(request.inputs ? { inputs: request.inputs } : {}),
    ...(request.bus ? { bus: request.bus } : {}),
  });
  return { output: output.raw };
};

const restoreAgent: EntityRestorer = async (request) => {
  refuseHumanInput(request);
  const agent = await Agent.fromLoaded(request.loaded, continuation(request), {
    registry: request.registry,
    ...(request.mode === 'fork' ? { fork: { branch: request.branch } } : {}),
  });
  const output = await agent.kickoff(undefined, {
    ...(request.inputs ? { inputs: request.inputs } : {}),
    ...(request.bus ? { bus: request.bus } : {}),
  });
  return { output: output.raw };
};

/**
 * The flow class is found by the name stored in the checkpoint in the project registry
 * (`crewline.config.ts` `flows`), never by a module path; an unregistered flow gives a
 * `not_rebuildable` error saying what to register. With `humanInput` a paused flow continues with that
 * answer; without it a paused flow asks again and the result says what it waits for.
 */
const restoreFlow: EntityRestorer = async (request) => {
  const flowClass = registeredClassFor(request.loaded, request.snapshot.name, request.registry);
  const flow = await (Flow.fromLoaded as typeof Flow.fromLoaded).call(
    flowClass,
    request.loaded,
    continuation(request),
    request.bus ? { bus: request.bus } : {},
    {
      registry: request.registry,
      ...(request.mode === 'fork' ? { fork: { branch: request.branch } } : {}),
      ...(request.rerunFrom !== undefined ? { rerunFrom: request.rerunFrom } : {}),
    },
  );
  const inputs = request.inputs ? { inputs: request.inputs } : {};
  const result =
    request.humanInput !== undefined
      ? await flow.resume(request.humanInput, inputs)
      : await flow.kickoff(inputs);
  if (result.status === 'paused') {
    const { methodName, message, kind, resumeFrom } = result.pause;
    return {
      output: `paused in ${methodName}: ${message}`,
      pause: { methodName, message, kind, ...(resumeFrom !== undefined ? { resumeFrom } : {}) },
    };
  }
  const output = result.output;
  return { output: typeof output === 'string' ? output : JSON.stringify(toJsonSafe(output) ?? null) };
};

// A table this module holds, not registrations made as a module loads: a bundler that trusts
// `"sideEffects": false` may drop a module imported only for what it registers.
const restorers: Readonly<Partial<Record<EntityKind, EntityRestorer>>> = {
  crew: restoreCrew,
  agent: restoreAgent,
  flow: restoreFlow,
};

/** The restore config a continuation adds to the entity's own: how to meet a run someone else holds. */
function continuation(request: RestoreRequest): CheckpointConfigInput {
  return request.onConflict !== undefined ? { onConflict: request.onConflict } : {};
}

/** Crews and agents never ask a person: an answer is refused instead of ignored. */
function refuseHumanInput(request: RestoreRequest): void {
  if (request.humanInput === undefined) return;
  throw new CrewlineError(
    'runtime',
    'invalid_argument',
    `checkpoint ${request.loaded.checkpoint.id} holds a ${request.snapshot.kind} ("${request.snapshot.name}"), which does not wait for an answer; an answer (humanInput, --answer) only continues a paused flow`,
  );
}
