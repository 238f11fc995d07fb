import { randomUUID } from 'node:crypto';
import {
  type BaseEvent,
  CheckpointCompletedEvent,
  CheckpointStartedEvent,
  eventBus as defaultBus,
  type EventBus,
  type EventContext,
  type EventSource,
  FlowFinishedEvent,
  FlowPausedEvent,
  FlowStartedEvent,
} from '@crewline/events';
import {
  type CheckpointableEntity,
  type CheckpointMetadata,
  type CheckpointSetting,
  decodeValue,
  type EncodedValue,
  type EntitySnapshot,
  type LoadedCheckpoint,
  triggersOn,
  type ValueCodec,
} from '@crewline/runtime-state';
import { parseFlowData } from '@crewline/runtime-state/internal';
import { anyAbortSignal } from '../checkpointing/abort-signals.js';
import { resolveCheckpointChain } from '../checkpointing/checkpoint-setting.js';
import { watchEntityJoins } from '../checkpointing/entity-joins.js';
import { Run } from '../checkpointing/run.js';
import { runValueCodec } from '../checkpointing/run-value-codec.js';
import type { FlowClass, ProjectRegistry } from '../project-config/project-config.js';
import { carryNestedSnapshots } from '../restore/carry-nested-snapshots.js';
import { keepEarlierKickoff } from '../restore/earlier-kickoff.js';
import { findEntitySnapshot } from '../restore/find-entity-snapshot.js';
import { joinRestoredRun, type PendingRestore } from '../restore/pending-restore.js';
import { flowError } from './errors.js';
import { type FlowGraph, flowGraph } from './flow-graph.js';
import { type FlowState, newStateId } from './flow-state.js';
import {
  loadStateCheckpoint,
  persistTarget,
  STATE_BRANCH_PREFIX,
  type StorageTarget,
  saveFlowState,
  stateBranch,
  stateLineageId,
  warnIfPersistLocationOverridden,
} from './flow-storage.js';
import type { FlowOptions, FlowPauseInfo, FlowResult } from './flow-types.js';
import { resumeHint } from './human-input.js';
import { MethodScheduler } from './method-scheduler.js';
import { redactedStateError, redactedStatePaths } from './redacted-state.js';
import { forgetStartedWork } from './rerun-point.js';
import {
  type Activation,
  executionFromData,
  type FlowExecution,
  firstPaused,
  newExecution,
} from './run-progress.js';
import { refuseMissingMethods } from './saved-methods.js';
import { SharedState, sameStateRecord } from './shared-state.js';
import { stateClaimRefused } from './state-claim-refused.js';
import { claimStateLineage, type StateLineageClaim } from './state-lineage-claim.js';

/** What one kickoff (or resume) asks for. */
export interface RunPlan {
  inputs: Record<string, unknown>;
  /** The answer to the first paused `ask()`. */
  answer: string | undefined;
  /** A checkpoint the flow was hydrated from (and whether to fork it). */
  restore: PendingRestore | undefined;
  /** Stops the run between methods and at its agents' next model call (see `KickoffOptions.abortSignal`). */
  abortSignal?: AbortSignal | undefined;
  /**
   * Told once the run has claimed what it continues and starts: a kickoff refused before (a claim
   * another run won) leaves the flow as it was, its restore still to do.
   */
  onStarted?: () => void;
  /**
   * The checkpoint continued is the latest save of a persisted state, found by its id
   * (`Flow.resume({ id }, answer)`): a refusal says to resume the state again, not the checkpoint.
   */
  resumedByStateId?: boolean;
}

/** What the engine sees of the Flow instance it drives (its methods are called by name). */
export interface EngineFlow extends CheckpointableEntity {
  readonly flowName: string;
  readonly checkpoint: CheckpointSetting;
}

/**
 * The one engine behind a `Flow`: it owns the flow's state, its state id and the progress of
 * its run (what a checkpoint stores), and runs kickoffs and resumes. The Flow class is its public
 * face; subclasses never see the engine (their members could collide with its names).
 */
export class FlowEngine<State extends object> {
  readonly flow: EngineFlow;
  /** The bus the flow was given; undefined: the bus of the run it is kicked off in (see {@link bus}). */
  readonly #givenBus: EventBus | undefined;
  readonly maxMethodCalls: number;
  stateId = newStateId();
  /**
   * The flow's id in the run when it is not its state id: set for a kickoff of this object after an
   * earlier one in the same run (see {@link run}), or by a restore of such a kickoff's snapshot.
   */
  #kickoffId: string | undefined;
  /**
   * Where the classes of the flow's values (state, method outputs, inputs) are found: the registry a
   * restore was given (`continueFromCheckpoint({ registry })`), else the process's.
   */
  registry: ProjectRegistry | undefined;
  /** The progress of the current (or last) run. */
  execution: FlowExecution = newExecution();
  readonly #shared: SharedState<State>;

  constructor(
    flow: EngineFlow,
    options: {
      bus: EventBus | undefined;
      maxMethodCalls: number;
      initialState: FlowOptions<State>['initialState'];
    },
  ) {
    this.flow = flow;
    this.#givenBus = options.bus;
    this.maxMethodCalls = options.maxMethodCalls;
    this.#shared = new SharedState(flow, options.initialState);
  }

  /**
   * The bus the flow emits on: the one it was given, else that of the run the caller executes in (a
   * flow kicked off in another flow's method joins that run, whatever its bus), else the
   * process-wide bus.
   */
  get bus(): EventBus {
    return this.#givenBus ?? Run.current()?.bus ?? defaultBus;
  }

  /** The codec of the flow's values, with the classes of {@link registry}. */
  get valueCodec(): ValueCodec {
    return runValueCodec(this.registry);
  }

  get graph(): FlowGraph {
    return flowGraph(this.flow.constructor as FlowClass, this.flow.flowName);
  }

  /** The state the methods share, created from `initialState` (or the schema) on first access. */
  get state(): FlowState<State> {
    const existing = this.#shared.existing;
    if (existing) return existing;
    this.stateId = this.#shared.declaredId() ?? this.stateId;
    return this.#shared.compose(this.stateId, []);
  }

  /** The state if it was created already (read or set before kickoff, or by an earlier kickoff). */
  existingState(): FlowState<State> | undefined {
    return this.#shared.existing;
  }

  /**
   * The flow's id among the entities of its run: its state id, but for a second (third...) kickoff
   * of this object in one run, which is an entity of its own and keeps the state id (a persisted
   * flow's identity across runs).
   */
  /** This kickoff is an entity of its own in its run, under a new id (the state id stays). */
  renewKickoffId(): void {
    this.#kickoffId = randomUUID();
  }

  get entityId(): string {
    return this.#kickoffId ?? this.stateId;
  }

  setStateId(id: string): void {
    this.stateId = id;
    this.#shared.setId(id);
  }

  /** An `id` written into `initialState` (class or options), if any. */
  declaredStateId(): string | undefined {
    return this.#shared.declaredId();
  }

  replaceState(layers: unknown[]): void {
    this.#shared.compose(this.stateId, layers);
  }

  /**
   * Stores the state of record: the live state at the start of a run; after `completed` completed,
   * without what executions that have not completed changed (see `SharedState.ofRecord`).
   */
  commitState(completed?: Activation): void {
    const { state, deleted } = this.#shared.ofRecord(
      this.state,
      completed,
      this.execution.pending,
      this.execution.committedState,
      this.valueCodec,
    );
    this.execution.committedState = state;
    this.execution.deletedFields = deleted;
  }

  /** Drops state changes made since the last completed method. */
  rollbackState(): void {
    const committed = this.execution.committedState;
    if (committed)
      this.#shared.restore(this.stateId, committed, this.valueCodec, this.execution.deletedFields);
  }

  /** Puts a saved flow snapshot back: progress, state id and state as of its last completed method. */
  hydrate(snapshot: EntitySnapshot): void {
    const data = parseFlowData(snapshot);
    this.execution = executionFromData(data.execution, this.valueCodec);
    this.stateId = data.stateId;
    // A later kickoff of one object in a run was saved under an id of its own.
    this.#kickoffId = snapshot.id === data.stateId ? undefined : snapshot.id;
    const committed = this.execution.committedState;
    if (committed)
      this.#shared.restore(this.stateId, committed, this.valueCodec, this.execution.deletedFields);
    else this.#shared.compose(this.stateId, []);
  }

  // Events name the kickoff (its entity), so that two kickoffs of one object in a run are told apart.
  source(): EventSource {
    return { kind: 'flow', id: this.entityId, name: this.flow.flowName };
  }

  context(methodName?: string): EventContext {
    return methodName === undefined ? { flowId: this.entityId } : { flowId: this.entityId, methodName };
  }

  /** Calls a method of the flow instance. */
  invoke(method: string, input: unknown): unknown {
    return (this.flow as unknown as Record<string, (value: unknown) => unknown>)[method]!.call(
      this.flow,
      input,
    );
  }

  /**
   * Runs the flow inside a {@link Run}: prepares the state (fresh, restored, or found by persisted
   * id), executes due methods, and ends as completed (`flow_finished`) or paused (`flow_paused`, with
   * a checkpoint when checkpointing or persistence is on).
   */
  async run(plan: RunPlan): Promise<FlowResult<State>> {
    const graph = this.graph;
    const flowName = this.flow.flowName;
    const config = resolveCheckpointChain([this.flow.checkpoint]);
    const bus = this.bus;
    const active = Run.current(this.#givenBus);
    // Kicked off again in the run it ran in: that kickoff stays an entity of the run as it ended (its
    // saved work is what a resume hands back to it), and this one is another, under an id of its own.
    // The state id stays: it is the state's identity (a persisted flow's across runs), and the state
    // an earlier kickoff of this object left is kept, as it is between runs.
    if (keepEarlierKickoff(this.flow, this.#givenBus)) this.#kickoffId = randomUUID();
    let restore = plan.restore;
    let continuing =
      restore !== undefined || (plan.answer !== undefined && this.execution.status === 'paused');
    const { id: inputId, ...otherInputs } = plan.inputs;
    if (inputId !== undefined && (typeof inputId !== 'string' || inputId.length === 0)) {
      throw flowError(
        'invalid_argument',
        `flow "${flowName}": inputs.id must be a non-empty string (the state id)`,
      );
    }

    // The state id asked for: inputs.id, else an id written into the initial state.
    const requestedId = typeof inputId === 'string' ? inputId : this.declaredStateId();
    if (continuing && typeof inputId === 'string' && inputId !== this.stateId) {
      throw flowError(
        'invalid_argument',
        `flow "${flowName}" was restored with state id "${this.stateId}"; it cannot continue as "${inputId}" (fork it for a new id, or drop inputs.id)`,
      );
    }

    // Kicked off by the id of a persisted state: its latest save is continued, or the state starts.
    const byStateId = !continuing && !active && graph.persisted && requestedId !== undefined;
    if (byStateId) {
      const loaded = await loadStateCheckpoint(
        await persistTarget(graph, config),
        flowName,
        requestedId,
        bus,
      );
      if (loaded) {
        this.hydrate(latestKickoffOfState(loaded, flowName, requestedId));
        restore = { loaded };
        continuing = true;
      }
    }
    // The root of a run is the one entity of its kind there under its state id (a persisted flow's
    // checkpoints are found by it), whichever kickoff's snapshot it continues.
    if (!active) this.#kickoffId = undefined;
    // A flow kicked off inside a restored run (e.g. from another flow's method) takes its own snapshot.
    const joinedRestored =
      !continuing &&
      active?.restored !== undefined &&
      joinRestoredRun({ kind: 'flow', names: [flowName], apply: (snapshot) => this.hydrate(snapshot) }, bus);
    if (joinedRestored) continuing = true;

    /** The kind of question this kickoff answers, if it answers one. */
    let answered: 'input' | 'feedback' | undefined;
    /**
     * Takes the answer back off this flow object while its run has not started (a refused claim: the
     * question was answered by another run): the object stays paused, and the next answer given to
     * it is judged like this one, not added after it.
     */
    let undoAnswer: (() => void) | undefined;
    /**
     * The state of record a continued flow was saved with, when new inputs are merged into it
     * (compared with {@link sameStateRecord}). A record is replaced, never changed in place.
     */
    let savedRecord: EncodedValue | undefined;
    let mergesInputs = false;
    if (continuing) {
      refuseMissingMethods(flowName, graph, this.execution, graph.persisted ? this.stateId : undefined);
      // State changes made by an execution that did not complete are dropped: it runs again.
      this.rollbackState();
      // A credential the checkpoint stored as [REDACTED] that the inputs do not give again: the
      // methods left to run would read that text as the value (send it as a key, write it).
      // Refused before the run claims, writes or runs anything. A finished flow runs nothing. The
      // state of record is scanned as stored, before the inputs are merged (see redactedStatePaths).
      const nothingLeft = this.execution.status === 'completed' && this.execution.pending.length === 0;
      const redacted =
        nothingLeft && restore?.rerunFrom === undefined
          ? []
          : redactedStatePaths(this.execution.committedState, otherInputs);
      if (redacted.length > 0) {
        const from = restore?.loaded ?? (joinedRestored ? active?.restored : undefined);
        throw redactedStateError({
          flowName,
          checkpointId: from?.document.metadata.id,
          paths: redacted,
          reach: active !== undefined ? 'nested' : byStateId ? 'stateId' : 'checkpoint',
        });
      }
      if (Object.keys(otherInputs).length > 0) {
        savedRecord = this.execution.committedState;
        mergesInputs = true;
        this.replaceState([this.state, otherInputs]);
      }
      if (plan.answer !== undefined) {
        const paused = firstPaused(this.execution);
        if (!paused)
          throw flowError('invalid_state', `flow "${flowName}" is not waiting for input; nothing to answer`);
        paused.answers.push(plan.answer);
        // Answered: no longer waiting. The checkpoint the run writes next holds the answer (see
        // answerTrigger), and a resume of it runs the method with it rather than asking again.
        const pause = paused.pause;
        answered = pause?.kind ?? 'input';
        paused.pause = undefined;
        undoAnswer = () => {
          paused.answers.pop();
          paused.pause = pause;
        };
      }
    } else {
      // State set before kickoff (or left by an earlier kickoff of this instance) is kept.
      const previous = this.existingState();
      this.execution = newExecution();
      if (requestedId !== undefined) this.setStateId(requestedId);
      this.replaceState([previous, otherInputs]);
    }
    this.#shared.forgetExecutions();
    this.commitState();
    // Inputs that changed the state of a continued flow are news to store, even at its finished end.
    const inputsChangedState = mergesInputs && !sameStateRecord(this.execution.committedState, savedRecord);

    const storedInputs = restore
      ? decodeValue<Record<string, unknown>>(restore.loaded.document.inputs, this.valueCodec)
      : {};
    const runInputs = { ...storedInputs, ...plan.inputs };
    const target = await persistTarget(graph, config, restore?.loaded);
    warnIfPersistLocationOverridden(flowName, graph, config, target);
    const written = { last: undefined as string | undefined, pause: undefined as string | undefined };
    /** Set once the run has claimed what it continues (or starts) and calls the body. */
    let started = false;
    let runState: unknown;
    /** The run this kickoff joined (kicked off inside another run), if it did. */
    let joined: Run | undefined;
    /**
     * The checkpoints the run took while this kickoff ran (see {@link takenCheckpointKey}): a run this
     * kickoff joined may still be writing ones it took before, which are no checkpoints of this kickoff.
     */
    const taken = new Set<string>();
    const stopTrackingStarts = bus.on(
      CheckpointStartedEvent,
      (source: unknown, event: CheckpointStartedEvent) => {
        if (source === runState) taken.add(takenCheckpointKey(event));
      },
    );
    const stopTrackingWrites = bus.on(
      CheckpointCompletedEvent,
      (source: unknown, event: CheckpointCompletedEvent) => {
        if (source !== runState || !taken.has(takenCheckpointKey(event))) return;
        written.last = event.reference;
        if (event.trigger === 'flow_paused') written.pause = event.reference;
      },
    );

    /**
     * The head of the state's own lineage, held while this kickoff runs when its run does not claim
     * it: a flow kicked off in another flow's method joins that run (whose lease fences the outer
     * lineage: two parent runs kicking off this state at once both ran its methods), and a root
     * kickoff continuing a save such a kickoff made (by the state id, `Flow.resume({ id }, answer)`,
     * `fromCheckpoint(...).kickoff()`) claims the outer lineage's head. Every kickoff of the state
     * then holds that one head. Not claimed: by a fork (its state id is a new one), nor by a kickoff
     * in a run that is a fork or continues one (see {@link forkedRun}, {@link continuesFork}): nested
     * in it, or a root continuing a save a fork's nested kickoff made (the resume of a fork's child
     * runs beside the original's child as the fork did).
     */
    const claimsStateLineage =
      graph.persisted &&
      (active !== undefined
        ? !forkedRun(active)
        : restore !== undefined &&
          restore.fork === undefined &&
          !continuesFork(restore.loaded.document.metadata) &&
          restore.loaded.document.metadata.lineageId !== stateLineageId(flowName, this.stateId));
    /** How this kickoff is said in a refusal in terms of the state (see stateClaimRefused). */
    const refusedAs = {
      kickoff:
        active !== undefined
          ? 'nested'
          : byStateId
            ? 'by-id'
            : plan.resumedByStateId === true
              ? 'resumed'
              : 'continued',
      hasSave: restore !== undefined,
    } as const;
    let stateClaim: StateLineageClaim | undefined;
    /** The refusal of the state's claim, said in terms of the state already. */
    let claimRefusal: unknown;
    try {
      // Claimed before the flow joins a run, so a refused kickoff leaves nothing of it there.
      if (claimsStateLineage) {
        try {
          stateClaim = await claimStateLineage({
            target,
            flowName,
            stateId: this.stateId,
            what:
              active === undefined ? `flow ${flowName}` : `flow ${flowName} in ${entityLabel(active.root)}`,
            bus,
          });
        } catch (error) {
          claimRefusal = stateClaimRefused(flowName, this.stateId, error, refusedAs);
          throw claimRefusal;
        }
      }
      const outcome = await Run.execute(
        {
          root: this.flow,
          config,
          inputs: runInputs,
          ...(restore ? { restored: restore.loaded } : {}),
          ...(restore?.fork ? { fork: restore.fork } : {}),
          ...(restore?.rerunFrom !== undefined ? { expectNewBranch: true } : {}),
          // An answer to a question its run went past: answered already, what follows ran already.
          ...(plan.answer !== undefined && restore !== undefined && restore.fork === undefined
            ? {
                refuseIfContinued: (checkpointId: string, headId: string) =>
                  flowError(
                    'conflict',
                    `flow "${flowName}": the question checkpoint ${checkpointId} waits on was answered already (its run went on to ${headId}); answering it again would run what follows a second time. To answer it again on a new branch, fork it: crewline checkpoint fork ${checkpointId} --answer …, or ${flowName}.fork({ restoreFrom }) then resume(answer)`,
                    { details: { checkpointId, headId } },
                  ),
              }
            : {}),
          ...(plan.abortSignal ? { abortSignal: plan.abortSignal } : {}),
          // A persisted flow's run claims its lineage head in the store it saves to, config or not:
          // a second process kicking off the state id meanwhile is refused (it ran beside this one).
          ...(graph.persisted ? { saveTarget: target } : {}),
          // One lineage per persisted state, on the state's branch; a state kicked off by its id
          // starts the same lineage in every process, so of two kickoffs at once one is refused.
          ...(graph.persisted && restore === undefined
            ? {
                lineage: {
                  branch: stateBranch(this.stateId),
                  ...(byStateId ? { lineageId: stateLineageId(flowName, this.stateId) } : {}),
                },
              }
            : {}),
          bus,
          valueCodec: this.valueCodec,
        },
        async (run) => {
          // The run has claimed what it continues: the answer is its own from here on.
          undoAnswer = undefined;
          started = true;
          plan.onStarted?.();
          runState = run.state;
          // A flow kicked off inside another run also stops with that run.
          // And when another process took over the state it holds (this one stalled past the lease):
          // before its next method.
          const abortSignal = anyAbortSignal([plan.abortSignal, run.abortSignal, stateClaim?.signal]);
          const isRoot = run.root === this.flow;
          if (!isRoot) joined = run;
          // `checkpoint: false` stops inheritance, as a crew's or an agent's does: without an entry of
          // its own, a flow kicked off inside another run had its events checkpointed under the outer
          // config. (A config of its own is set by Run.execute as it joins.)
          if (!isRoot && this.flow.checkpoint === false) run.setConfigFor(this.entityId, null);
          const execution = this.execution;
          // Whoever continues a snapshot of the restored run, the root or a flow that joined it, sets
          // aside the crews of its completed methods before its methods run: a crew of a re-run
          // method must not take up the finished work of an earlier crew of the same name.
          if (run.restored && (isRoot || joinedRestored)) {
            // A re-run of a method starts its executions from scratch: what they had started when
            // the save was taken (beside a method running at the same time) is not theirs to continue.
            if (isRoot && restore?.rerunFrom !== undefined)
              run.discardRestoredSnapshots(forgetStartedWork(execution, restore.rerunFrom));
            carryNestedSnapshots(run, execution, run.restored);
            // What its executions due to run again had started is theirs to take up again, whatever
            // order the crews of methods running side by side join in (see `claimStartedFirst`).
            run.reserveRestoredSnapshots(
              execution.pending.flatMap((activation) =>
                activation.started.flatMap((entity) => entity.id ?? []),
              ),
            );
          }
          const emit = (event: Parameters<Run['emit']>[1]) => run.emit(this.flow, event);
          const writeTo = (trigger: string) =>
            saveFlowState(run, target, trigger, {
              flowName,
              stateId: this.stateId,
              maxCheckpoints: config?.maxCheckpoints,
            });
          /**
           * Whether the run's automatic checkpoint on `event` wrote what a save of this flow to its
           * target would: the config the event is checkpointed under (the flow's own, else the one
           * it inherits, e.g. a parent flow's '*' for a flow kicked off in its method) triggers on it
           * and stores where the save would go. The flow's own config alone told a nested @persist
           * flow nothing was written, and each of its saves was the same checkpoint again. A save
           * to another store (its @persist location) is where its state is found by id: still made.
           * Stores are compared by provider kind and resolved location: a parent given
           * `provider: new JsonProvider()` and a `@persist({ location })` with the default provider
           * reach one directory through two provider objects.
           */
          const writtenByRun = async (event: BaseEvent): Promise<boolean> => {
            const applied = run.configForEvent(event);
            if (applied === undefined || !triggersOn(applied, event.type)) return false;
            const automatic = await persistTarget(graph, applied);
            return sameStore(automatic, target);
          };
          const runner = new MethodScheduler({
            flow: this.flow,
            flowName,
            graph,
            execution,
            maxMethodCalls: this.maxMethodCalls,
            abortSignal,
            source: () => this.source(),
            context: (methodName) => this.context(methodName),
            emit,
            invoke: (method, input) => this.invoke(method, input),
            commitState: (completed) => this.commitState(completed),
            afterCompletion: async (node, finished) => {
              if (!node.persisted || (await writtenByRun(finished))) return;
              await writeTo(finished.type);
            },
            watchNested: (onJoin, body) =>
              watchEntityJoins((entity, state) => {
                // A crew kicked off on a bus of its own runs apart: it is no work of this run.
                if (state !== run.state || entity === this.flow) return;
                // Without a setting of its own, it follows this flow's (see Run.configForEvent). A
                // watcher of an outer flow's method is told first: the innermost flow is noted last.
                run.noteJoinedFrom(entity.entityId, this.entityId);
                onJoin({ kind: entity.entityKind, name: entity.entityName, id: entity.entityId });
              }, body),
          });
          // Restored with nothing left to run: its last method completed in an earlier run.
          const nothingToRun =
            continuing && execution.status === 'completed' && execution.pending.length === 0;
          // Restored at its finished end: its flow_finished is in the run's history already (a flow
          // saved after its last method but before that event is completed too, and still finishes
          // below). Announcing the end again would make a resume of a finished run write a checkpoint
          // that says nothing new, once per resume. Inputs that changed its state (a persisted flow
          // kicked off again by id, a restored one) are news: unwritten, the next kickoff by id would
          // not see them. A fork's end is the first checkpoint of its branch, which names the
          // checkpoint it was forked from.
          const finishedAlready =
            nothingToRun &&
            !inputsChangedState &&
            restore?.fork === undefined &&
            run.state.events.some(
              (event) => event.type === FlowFinishedEvent.type && event.source?.id === this.entityId,
            );
          execution.status = 'running';
          // An answer is recorded before the method it answers runs again: otherwise a flow whose
          // triggers fire on nothing after the question (the default, task_completed, with no task
          // left) wrote nothing, its pause could be answered a second time (what follows it ran
          // twice), and a fork with an answer left no branch.
          if (isRoot && answered !== undefined && (config || graph.persisted)) {
            const trigger = answerTrigger(answered);
            if (!(config !== undefined && triggersOn(config, trigger))) await writeTo(trigger);
          }
          if (!continuing) {
            runner.enqueueStarts();
            emit(
              new FlowStartedEvent({
                flowName,
                inputs: plan.inputs,
                source: this.source(),
                context: this.context(),
              }),
            );
          }
          try {
            await runner.run();
          } catch (error) {
            execution.status = 'failed';
            throw error;
          }
          const paused = firstPaused(execution);
          if (paused?.pause) {
            execution.status = 'paused';
            const pausedEvent = new FlowPausedEvent({
              flowName,
              methodName: paused.method,
              message: paused.pause.message,
              source: this.source(),
              context: this.context(paused.method),
            });
            emit(pausedEvent);
            if ((config || graph.persisted) && !(await writtenByRun(pausedEvent)))
              await writeTo(pausedEvent.type);
            return { paused };
          }
          execution.status = 'completed';
          if (finishedAlready) return { paused: undefined };
          const finishedEvent = new FlowFinishedEvent({
            flowName,
            result: execution.lastOutput,
            source: this.source(),
            context: this.context(),
          });
          emit(finishedEvent);
          // A persisted state its inputs changed with no method left to run: no method's save holds it.
          if (nothingToRun && inputsChangedState && graph.persisted && !(await writtenByRun(finishedEvent)))
            await writeTo(finishedEvent.type);
          return { paused: undefined };
        },
      );
      // A joined run writes its automatic checkpoints (this flow's saves among them: see writtenByRun)
      // in the background and settles them only when it ends, after this result is read: the
      // references the result gives (`checkpoint`, `pause.resumeFrom`) are known once they are stored.
      // A checkpoint taken from here on is none of this kickoff's (a sibling method's, the parent's),
      // and a kickoff that took none has nothing to wait for.
      stopTrackingStarts();
      if (joined && taken.size > 0) await joined.state.durable();
      const execution = this.execution;
      const base = {
        stateId: this.stateId,
        state: this.state,
        output: execution.lastOutput,
        methodName: execution.lastMethod,
        completedMethods: [...execution.completedMethods],
        checkpoint: written.last,
      };
      if (outcome.paused?.pause) {
        const pause: FlowPauseInfo = {
          methodName: outcome.paused.method,
          message: outcome.paused.pause.message,
          kind: outcome.paused.pause.kind,
          resumeFrom: written.pause,
          hint: resumeHint(flowName, this.stateId, written.pause, graph.persisted),
        };
        return { ...base, status: 'paused', pause };
      }
      return { ...base, status: 'completed' };
    } catch (error) {
      undoAnswer?.();
      // Another process runs this state, or ran it while this kickoff looked for its latest save.
      if (byStateId && !started && error !== claimRefusal)
        throw stateClaimRefused(flowName, this.stateId, error, refusedAs);
      throw error;
    } finally {
      stopTrackingStarts();
      stopTrackingWrites();
      // Ended, failed or paused: the next kickoff of the state (a resume of its pause) may start at once.
      await stateClaim?.release();
    }
  }
}

/**
 * The snapshot a persisted flow's state continues from: of the kickoffs of that state the checkpoint
 * holds (one object kicked off twice in one run is two entities, each with the state id), the latest
 * (kickoffs are saved in the order they started); else the first flow of the name.
 */
function latestKickoffOfState(loaded: LoadedCheckpoint, flowName: string, stateId: string): EntitySnapshot {
  const kickoffs = loaded.document.entities.filter(
    (entity) =>
      entity.kind === 'flow' && entity.name === flowName && parseFlowData(entity).stateId === stateId,
  );
  return kickoffs.at(-1) ?? findEntitySnapshot(loaded, { kind: 'flow', names: [flowName] });
}

/**
 * A run that is a fork, or continues one: a fork is meant to run again on its own branch, so a
 * persisted state kicked off in its methods does not claim the state's head (a fork of a parent made
 * while the original parent runs the child would be refused, and a fork of the child cannot help: its
 * state id is written in the parent's method). Forked as it started (`fork`, `onConflict: 'fork'`):
 * its lineage is not the restored checkpoint's. Continuing a fork's lineage: see {@link continuesFork}.
 */
function forkedRun(run: Run): boolean {
  const restored = run.restored?.document.metadata;
  if (restored === undefined) return false;
  if (run.state.lineage.lineageId !== restored.lineageId) return true;
  return continuesFork(restored);
}

/**
 * Whether a run continuing a checkpoint with this metadata continues a fork's lineage: the
 * checkpoint is on a branch where no run starts (a new run starts on `main`, a persisted root flow's
 * on its state's branch). Such a run claims no persisted state's head, nested in it ({@link forkedRun})
 * or continued from it as a root (a resume of a fork's nested pause). A fork of a persisted root flow
 * on its default branch (its new state's) is on such a branch too: a run continuing it later is taken
 * for an original and claims.
 */
function continuesFork(metadata: CheckpointMetadata): boolean {
  return metadata.branch !== 'main' && !metadata.branch.startsWith(`${STATE_BRANCH_PREFIX}/`);
}

/** What an entity is called to whoever is refused: `flow Desk`, or `crew` for a crew without a name. */
function entityLabel(entity: CheckpointableEntity): string {
  const { entityKind, entityName } = entity;
  return entityName === '' || entityName === entityKind ? entityKind : `${entityKind} ${entityName}`;
}

/**
 * The trigger of the checkpoint that records an answer: the event the answer is delivered with
 * (`flow.ask()` emits it as the method asks again, which is when an automatic checkpoint on it is
 * written).
 */
function answerTrigger(kind: 'input' | 'feedback'): 'flow_input_received' | 'human_feedback_received' {
  return kind === 'input' ? 'flow_input_received' : 'human_feedback_received';
}

/**
 * Whether two storage targets are one store: one provider object at one resolved location, or two
 * built-in providers of one kind there (their resolved location alone names the store). Two
 * in-memory providers, or a third party's providers configured apart, given one location name are
 * two stores.
 */
function sameStore(one: StorageTarget, other: StorageTarget): boolean {
  if (one.location !== other.location) return false;
  if (one.provider === other.provider) return true;
  return one.provider.kind === other.provider.kind && storesNamedByLocation.has(one.provider.kind);
}

/** Provider kinds whose resolved location alone names the store. */
const storesNamedByLocation: ReadonlySet<string> = new Set(['json', 'sqlite', 'postgres']);

/**
 * What tells one checkpoint of a run from another as it is taken and when it is stored: its store,
 * branch and parent (each checkpoint taken in a location names the one taken before it there).
 */
function takenCheckpointKey(event: CheckpointStartedEvent | CheckpointCompletedEvent): string {
  return JSON.stringify([event.provider, event.location, event.branch, event.parentId]);
}
