import { type EventBus, FlowCreatedEvent, keepNamesFromValueRedaction } from '@crewline/events';
import {
  type CheckpointableEntity,
  type CheckpointConfigInput,
  type CheckpointProvider,
  type CheckpointSetting,
  decodeValue,
  type EntitySnapshot,
  type EntitySummary,
  encodeValue,
  type LoadedCheckpoint,
  type SettledValues,
} from '@crewline/runtime-state';
import { resolveCheckpointChain, validateCheckpointSetting } from '../checkpointing/checkpoint-setting.js';
import { Run } from '../checkpointing/run.js';
import { settlerOf } from '../checkpointing/snapshot-values.js';
import type { FlowClass, ProjectRegistry } from '../project-config/project-config.js';
import { findEntitySnapshot } from '../restore/find-entity-snapshot.js';
import { loadRestoreTarget } from '../restore/load-restore-target.js';
import {
  kickoffCheckpoint,
  type PendingRestore,
  type RestoreSubject,
  rebuildFromCheckpoint,
  restoreFromCheckpoint,
} from '../restore/pending-restore.js';
import { checkKickoffOptions, flowFork, loadResumeTarget, rerunCheckpoint } from './continue-point.js';
import { flowError } from './errors.js';
import { FlowEngine, type RunPlan } from './flow-engine.js';
import { classRecords } from './flow-metadata.js';
import { flowNameOf } from './flow-name.js';
import { flowSnapshot, flowSnapshotNames, flowSummary, registeredClassFor } from './flow-snapshot.js';
import type { FlowState, StateSchema } from './flow-state.js';
import { persistTarget } from './flow-storage.js';
import type {
  FlowOptions,
  FlowPauseInfo,
  FlowResult,
  KickoffOptions,
  ResumeOptions,
  ResumeTarget,
} from './flow-types.js';
import { askPerson } from './human-input.js';
import { type FlowStateInfo, listStatesOf } from './list-flow-states.js';
import { methodScope } from './method-scope.js';
import { fillRedactedState } from './redacted-state.js';
import { checkRerunPoint } from './rerun-point.js';
import { firstPaused } from './run-progress.js';
import { StoredFlowParts } from './stored-flow-parts.js';

/** A flow class, as registered in `crewline.config.ts` (`flows: { name: MyFlow }`). */
export type FlowConstructor<F extends Flow<any> = Flow<any>> = (new (
  options?: FlowOptions<any>,
) => F) & {
  readonly flowName?: string;
  readonly stateSchema?: StateSchema;
  readonly name: string;
};

/** `Flow.fromLoaded` called on the class a static was called on. */
export type LoadedFactory = (
  this: unknown,
  loaded: LoadedCheckpoint,
  config: CheckpointConfigInput,
  options: FlowOptions<any>,
  restore?: { fork?: { branch?: string | undefined }; rerunFrom?: string },
) => Promise<Flow<any>>;

/**
 * An event-driven workflow. Subclass it, mark entry points with `@start()`, chain methods with
 * `@listen(...)` and branch with `@router(...)`; keep data in `this.state`.
 *
 * Members a subclass may declare (plain declarations, no `override` needed, because the base class
 * does not declare them):
 * - `initialState = { ... }` — initial state values, as a field or a method returning them; read when
 *   the state is first needed (fields of a subclass are not set yet while the base constructor runs).
 * - `static stateSchema = z.object({ ... })` — any synchronous Standard Schema (zod 4, valibot...):
 *   validates the state and fills its defaults at kickoff and after a restore.
 * - `static flowName = 'research'` — the name in events and checkpoints (default: the class name).
 *
 * `state.id` is always there: generated, or given as `inputs.id`.
 */
export class Flow<State extends object = Record<string, unknown>> implements CheckpointableEntity {
  /**
   * Restores a flow from a checkpoint (`config.restoreFrom`: a JSON file or directory, `db#id`,
   * `postgres-url#id`). Called on a subclass it returns an instance of that subclass (called on
   * `Flow` itself, of the class registered under the checkpoint's flow name in `crewline.config.ts`).
   * Kick it off to continue: completed methods are skipped and their outputs, counts and state
   * restored. It keeps checkpointing where it was read from, like a restored crew.
   */
  static async fromCheckpoint<T extends Flow<any>>(
    this: new (
      options?: FlowOptions<any>,
    ) => T,
    config: CheckpointConfigInput,
    options: FlowOptions<any> = {},
  ): Promise<T> {
    return restoreFromCheckpoint(
      config,
      options,
      // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass the static was called on
      (loaded) => (Flow.fromLoaded as LoadedFactory).call(this, loaded, config, options) as Promise<T>,
    );
  }

  /**
   * Like {@link Flow.fromCheckpoint}, on a new branch (given, else generated; `flow-states/<new id>`
   * for a persisted flow) and lineage, with a new state id. The original branch is never written to.
   */
  static async fork<T extends Flow<any>>(
    this: new (
      options?: FlowOptions<any>,
    ) => T,
    config: CheckpointConfigInput,
    options: FlowOptions<any> & {
      branch?: string;
      /**
       * The method a fork re-runs: its due executions start from scratch (their crews' saved tasks
       * and conversations are dropped, even from a save taken while it ran beside another listener),
       * as `kickoff({ rerunFrom })` does. Give a checkpoint saved before that method completed.
       * Default: none (the fork continues what is pending at the checkpoint, half-done crews included).
       */
      rerunFrom?: string;
    } = {},
  ): Promise<T> {
    const { branch, rerunFrom, ...flowOptions } = options;
    return restoreFromCheckpoint(
      config,
      options,
      (loaded) =>
        // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass the static was called on
        (Flow.fromLoaded as LoadedFactory).call(this, loaded, config, flowOptions, {
          fork: { branch },
          ...(rerunFrom !== undefined ? { rerunFrom } : {}),
        }) as Promise<T>,
    );
  }

  /**
   * @internal Rebuilds a flow from an already loaded checkpoint (used by `fromCheckpoint`, `fork`,
   * `resume` and the CLI's `continueFromCheckpoint`).
   */
  static async fromLoaded(
    loaded: LoadedCheckpoint,
    config: CheckpointConfigInput = {},
    options: FlowOptions<any> = {},
    restore: {
      fork?: { branch?: string | undefined };
      registry?: ProjectRegistry;
      /** The method a re-run runs again: see `PendingRestore.rerunFrom`. */
      rerunFrom?: string;
    } = {},
  ): Promise<Flow<any>> {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass the static was called on
    const calledOn = this as unknown as FlowConstructor;
    const flowClass =
      calledOn === (Flow as unknown)
        ? (registeredClassFor(loaded, options.name) as unknown as FlowConstructor)
        : calledOn;
    const flowName = options.name ?? flowNameOf(flowClass);
    const fork = restore.fork && flowFork(flowClass, flowName, restore.fork.branch);
    const { entity: flow, pending } = await rebuildFromCheckpoint(
      loaded,
      config,
      { kind: 'flow', names: flowSnapshotNames(flowClass, flowName), offStaysOff: true },
      async () => {
        const rebuilt = new flowClass(options) as Flow<any>;
        // Before hydrate: the saved values are decoded with the classes of the registry given.
        rebuilt.#engine.registry = restore.registry;
        return { entity: rebuilt, apply: (snapshot) => rebuilt.#engine.hydrate(snapshot) };
      },
      fork,
    );
    // A checkpoint setting the caller gives is used as given.
    if (options.checkpoint !== undefined) flow.checkpoint = options.checkpoint;
    if (restore.rerunFrom !== undefined) {
      checkRerunPoint(flow.#engine.graph, flow.#engine.execution, restore.rerunFrom, {
        flowName,
        checkpointId: loaded.document.metadata.id,
      });
    }
    flow.#pendingRestore =
      restore.rerunFrom === undefined ? pending : { ...pending, rerunFrom: restore.rerunFrom };
    if (fork) flow.#engine.setStateId(fork.stateId);
    return flow;
  }

  /**
   * Continues a paused flow with the answer to its question, in this process or a new one. `from` is
   * the checkpoint reference from the paused result (`result.pause.resumeFrom`), or `{ id }` for a
   * flow with `@persist()` (looked up where it persists, or at `location`). `options.inputs` are
   * merged into the restored state as kickoff inputs are (default: none): how a state field the
   * checkpoint stored as `[REDACTED]` (a credential) is given again.
   */
  static async resume<T extends Flow<any>>(
    this: new (
      options?: FlowOptions<any>,
    ) => T,
    from: ResumeTarget,
    answer: string,
    options: FlowOptions<any> & Pick<ResumeOptions, 'inputs'> = {},
  ): Promise<FlowResult<T extends Flow<infer S> ? S : never>> {
    if (typeof answer !== 'string')
      throw flowError('invalid_argument', 'resume(from, answer): the answer must be a string');
    const { inputs, ...flowOptions } = options;
    const loaded = await loadResumeTarget(from, () => new this(flowOptions) as Flow<any>, flowOptions.bus);
    // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass the static was called on
    const flow = await (Flow.fromLoaded as LoadedFactory).call(this, loaded, {}, flowOptions);
    if (!firstPaused(flow.#engine.execution)) {
      throw flowError(
        'invalid_state',
        `checkpoint ${loaded.checkpoint.id} of flow "${flow.flowName}" is not waiting for input; continue it with ${flow.flowName}.fromCheckpoint(...).kickoff()`,
      );
    }
    return flow.#start({
      inputs: { ...(inputs ?? {}) },
      answer,
      resumedByStateId: typeof from === 'object' && 'id' in from,
    }) as Promise<FlowResult<any>>;
  }

  /**
   * The flow states saved at a location (default: where this flow persists, else `./.checkpoints`):
   * one entry per state id with its flow name, last completed method, time and the reference of its
   * latest checkpoint. Called on a subclass it lists that flow's states only.
   */
  static async listStates(
    options: { location?: string; provider?: CheckpointProvider } = {},
  ): Promise<FlowStateInfo[]> {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass the static was called on
    return listStatesOf(this === Flow ? undefined : (this as unknown as FlowClass), options);
  }

  /** The checkpoint setting (see {@link FlowOptions.checkpoint}); a restored flow's points where it was read from. */
  checkpoint: CheckpointSetting;
  readonly #options: FlowOptions<State>;
  readonly #engine: FlowEngine<State>;
  /** What this flow's checkpoints keep from one snapshot to the next (see {@link StoredFlowParts}). */
  readonly #storedParts = new StoredFlowParts();
  #pendingRestore: PendingRestore | undefined;
  #running = false;
  #lastPause: FlowPauseInfo | undefined;
  /** The provider the last run wrote its pause checkpoint with: where `resume` reads it back. */
  #pauseProvider: CheckpointProvider | undefined;

  constructor(options: FlowOptions<State> = {}) {
    if (options === null || typeof options !== 'object') {
      throw flowError('invalid_argument', 'flow options must be an object');
    }
    this.#options = options;
    // Its name and method names are what a checkpoint stores and a resume finds its progress by: no
    // registered credential that is a word of one may rewrite it (review RF-1).
    keepNamesFromValueRedaction([
      this.flowName,
      ...classRecords(this.constructor as FlowConstructor).flatMap((record) => [...record.methods.keys()]),
    ]);
    this.checkpoint = validateCheckpointSetting(options.checkpoint, `flow "${this.flowName}"`);
    const maxMethodCalls = options.maxMethodCalls ?? 100;
    if (!Number.isInteger(maxMethodCalls) || maxMethodCalls < 1) {
      throw flowError(
        'invalid_argument',
        `maxMethodCalls must be a whole number of at least 1 (got ${String(maxMethodCalls)})`,
      );
    }
    this.#engine = new FlowEngine(this, {
      bus: options.bus,
      maxMethodCalls,
      initialState: options.initialState,
    });
    // A setting of its own stops inheritance from the start: made in another run's method, the flow's
    // creation is no checkpoint of that run's setting (its kickoff sets its own again, under its final
    // id: `checkpoint: false` for nothing, a config from then on, as a flow that is a run's root is
    // checkpointed from its kickoff). Without one, its creation follows the flow whose method made it,
    // as its kickoff will (see Run.configForEvent): in a nested flow with `checkpoint: false`, nowhere.
    const run = Run.current(options.bus);
    const creator = methodScope.getStore()?.flow;
    if (this.checkpoint !== undefined) run?.setConfigFor(this.#engine.entityId, null);
    else if (creator instanceof Flow) run?.noteJoinedFrom(this.#engine.entityId, creator.entityId);
    this.#engine.bus.emit(
      this,
      new FlowCreatedEvent({
        flowName: this.flowName,
        source: this.#engine.source(),
        context: this.#engine.context(),
      }),
    );
  }

  /** The flow's name: the `name` option, `static flowName`, or the class name. */
  get flowName(): string {
    return this.#options.name ?? flowNameOf(this.constructor as FlowConstructor);
  }

  /**
   * The bus this flow emits on: the `bus` option, else the bus of the run it is created or kicked off
   * in, else the process-wide `eventBus`. Crews, agents and flows kicked off inside its methods
   * without a bus of their own join the flow's run, whatever its bus.
   */
  get bus(): EventBus {
    return this.#engine.bus;
  }

  /** The state the methods share. Created from `initialState` (or the schema) on first access. */
  get state(): FlowState<State> {
    return this.#engine.state;
  }

  /** Methods that completed at least once in the current (or last) run, in order. */
  get completedMethods(): readonly string[] {
    return [...this.#engine.execution.completedMethods];
  }

  /** The latest output of a method in the current (or last) run; `undefined` if it has not completed. */
  outputOf(methodName: string): unknown {
    return this.#engine.execution.outputs.get(methodName);
  }

  /**
   * Asks a person for input from inside a flow method. When an answer was given (see
   * {@link Flow.resume}) it is returned; otherwise the flow pauses: the method stops here, the flow
   * is checkpointed (when checkpointing or `@persist()` is on) and `kickoff` returns a paused
   * result. On resume the method runs again from its beginning with the answer available, so keep
   * the work before `ask()` cheap, or split it into an earlier method.
   */
  async ask(message: string, options: { kind?: 'feedback' | 'input' } = {}): Promise<string> {
    return askPerson(this, message, options.kind ?? 'feedback', (activation) => ({
      source: this.#engine.source(),
      context: this.#engine.context(activation.method),
    }));
  }

  /**
   * Runs the flow: fresh, or continuing a restored checkpoint or a persisted state. A flow restored
   * at its finished end returns its saved result and emits no `flow_finished` again, so it writes no
   * checkpoint (`result.checkpoint` is undefined).
   */
  async kickoff(options: KickoffOptions = {}): Promise<FlowResult<State>> {
    checkKickoffOptions(options);
    const inputs = { ...(options.inputs ?? {}) };
    const fromCheckpoint =
      options.rerunFrom === undefined
        ? options.fromCheckpoint
        : await rerunCheckpoint(this, {
            method: options.rerunFrom,
            inputs,
            fromCheckpoint: options.fromCheckpoint,
            declaredStateId: this.#engine.declaredStateId(),
          });
    // Like a crew: continue the saved run and keep checkpointing where it was read from; without
    // restoreFrom it is a checkpoint config for this flow.
    const { checkpoint, restore } = await kickoffCheckpoint(
      this.#restoreSubject(),
      fromCheckpoint,
      this.#engine.bus,
    );
    this.checkpoint = checkpoint;
    // A re-run continues a save its run went past, on a new branch: that is what it asks for.
    if (restore)
      this.#pendingRestore =
        options.rerunFrom === undefined ? restore : { ...restore, rerunFrom: options.rerunFrom };
    return this.#start({ inputs, answer: undefined, abortSignal: options.abortSignal });
  }

  /**
   * Continues this paused flow with the answer to its question (same process, or a flow restored
   * with `fromCheckpoint`). From another process use the static `MyFlow.resume(reference | { id },
   * answer)`. `options.inputs` are merged into the state as kickoff inputs are (default: none);
   * `options.abortSignal` stops it as in `kickoff` (default: none).
   */
  async resume(answer: string, options: ResumeOptions = {}): Promise<FlowResult<State>> {
    if (typeof answer !== 'string')
      throw flowError('invalid_argument', 'resume(answer): the answer must be a string');
    if (this.#engine.execution.status !== 'paused' && !this.#pendingRestore) {
      throw flowError('invalid_state', `flow "${this.flowName}" is not paused; nothing to resume`);
    }
    if (!this.#pendingRestore && this.#lastPause?.resumeFrom) {
      const loaded = await loadRestoreTarget(this.#lastPause.resumeFrom, {
        bus: this.#engine.bus,
        provider: this.#pauseProvider,
      });
      // The pause checkpoint was written by this object's run: what it stored as [REDACTED], this
      // object still holds in its state of record, and the methods left to run get it, not that text.
      const record = this.#engine.execution.committedState;
      const held = record && decodeValue(record, this.#engine.valueCodec);
      this.#engine.hydrate(findEntitySnapshot(loaded, this.#restoreSubject()));
      fillRedactedState(this.#engine.state, this.#engine.execution.committedState, held);
      this.#pendingRestore = { loaded };
    }
    return this.#start({
      inputs: { ...(options.inputs ?? {}) },
      answer,
      abortSignal: options.abortSignal,
    });
  }

  async #start(request: {
    inputs: Record<string, unknown>;
    answer: string | undefined;
    abortSignal?: AbortSignal | undefined;
    /** See `RunPlan.resumedByStateId`. */
    resumedByStateId?: boolean;
  }): Promise<FlowResult<State>> {
    if (this.#running)
      throw flowError('invalid_state', `flow "${this.flowName}" is already running; await its kickoff first`);
    this.#running = true;
    try {
      // The saved state was put on this flow when it was restored (fromCheckpoint, fork, a kickoff's
      // restoreFrom); what the caller changed in it since is theirs, not a half-run method's, so it is
      // the state of record the run continues from (the engine drops changes made after that).
      if (this.#pendingRestore) this.#engine.commitState();
      let started = false;
      const plan: RunPlan = {
        inputs: request.inputs,
        answer: request.answer,
        restore: this.#pendingRestore,
        abortSignal: request.abortSignal,
        ...(request.resumedByStateId === true ? { resumedByStateId: true } : {}),
        onStarted: () => {
          started = true;
        },
      };
      this.#pendingRestore = undefined;
      const result = await this.#engine.run(plan).catch((error: unknown) => {
        // Refused before it started (the question answered by another run, a lineage another
        // process holds): the next kickoff or answer continues the same checkpoint, and is judged
        // the same way — not as an in-memory run of what that checkpoint holds.
        if (!started && plan.restore !== undefined && this.#pendingRestore === undefined)
          this.#pendingRestore = plan.restore;
        throw error;
      });
      this.#lastPause = result.pause;
      // The pause checkpoint may be in a provider object no registry knows (SPEC: any object that
      // meets the provider contract), so `resume` reads it with the provider it was written with.
      this.#pauseProvider = result.pause?.resumeFrom
        ? (
            await persistTarget(
              this.#engine.graph,
              resolveCheckpointChain([this.checkpoint]),
              plan.restore?.loaded,
            )
          ).provider
        : undefined;
      return result as FlowResult<State>;
    } finally {
      this.#running = false;
    }
  }

  /** What the restore path needs of this flow. */
  #restoreSubject(): RestoreSubject {
    return {
      kind: 'flow',
      names: flowSnapshotNames(this.constructor as FlowConstructor, this.flowName),
      checkpoint: this.checkpoint,
      owner: `flow "${this.flowName}"`,
      offStaysOff: true,
      apply: (snapshot) => this.#engine.hydrate(snapshot),
    };
  }

  // CheckpointableEntity -------------------------------------------------------------------------

  get entityKind(): 'flow' {
    return 'flow';
  }

  /**
   * The flow's identity in checkpoints: its state id, but for a later kickoff of this object in the
   * run an earlier one ran in (an entity of its own, under an id of its own; the state id stays).
   */
  get entityId(): string {
    return this.#engine.entityId;
  }

  /**
   * @internal Another object of the run it joins has this flow's state id (one state kicked off twice
   * in a run, each time with a new Flow object): this kickoff is an entity of its own there.
   */
  renewEntityId(): void {
    this.#engine.renewKickoffId();
  }

  get entityName(): string {
    return this.flowName;
  }

  snapshotEntity(settled?: SettledValues): EntitySnapshot {
    const stored = this.#storedParts.forSnapshot(this.#engine.execution, settled);
    const committed = this.#engine.execution.committedState;
    return flowSnapshot(this, this.#engine.execution, this.#engine, {
      // Before the first method completes, the state is the live one: stored afresh each time.
      state:
        committed === undefined ? encodeValue(this.state, this.#engine.valueCodec) : stored.state(committed),
      maxMethodCalls: this.#engine.maxMethodCalls,
      codec: this.#engine.valueCodec,
      stored,
      settle: settlerOf(settled),
    });
  }

  summarizeEntity(): EntitySummary {
    return flowSummary(this, this.#engine.execution, this.#engine);
  }
}
