import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type BaseEvent,
  CrewlineError,
  eventBus as defaultBus,
  type EventBus,
  logger,
  type RunState,
} from '@crewline/events';
import {
  type CheckpointableEntity,
  type CheckpointConfig,
  type CheckpointProvider,
  DEFAULT_CHECKPOINT_LOCATION,
  type EntityKind,
  type EntitySnapshot,
  LazyProvider,
  type LoadedCheckpoint,
  type ProviderRegistry,
  RuntimeState,
  readyProvider,
  type ValueCodec,
} from '@crewline/runtime-state';
import { keptEntity } from '@crewline/runtime-state/internal';
import { storedDocumentOf } from '../restore/edited-checkpoint.js';
import { installAutoCheckpoint } from './auto-checkpoint.js';
import { withDefaultProvider } from './checkpoint-setting.js';
import { claimSavedEntity, claimSnapshot, type StartedEntity } from './claim-snapshot.js';
import { joinRun } from './entity-joins.js';
import { assertNewForkBranch, newerHeadWithoutLeases } from './fork-branch.js';
import { forkOnConflictMessage, olderCheckpointMessage } from './fork-on-conflict.js';
import { continuedSinceRead, wasHeadWhenRead } from './head-when-read.js';
import { DEFAULT_LEASE_TTL_MS, LineageLease } from './lineage-lease.js';
import { builtinRegistry, defaultProvider, registryOf } from './provider-registry.js';
import { runValueCodec } from './run-value-codec.js';
import { savedWorkOf } from './saved-work-stand-ins.js';
import { trackRunForSignals } from './signals.js';

const component = 'runtime';

/** The run each async context executes in, whatever its bus (see {@link Run.current}). */
const enclosingRun = new AsyncLocalStorage<Run>();
/** Told of each run that starts in an async context (see {@link Run.watchStarts}). */
const startWatcher = new AsyncLocalStorage<(run: Run) => void>();

export interface RunOptions {
  /** The crew, flow or standalone agent that owns the run. */
  root: CheckpointableEntity;
  /** The root's resolved config (provider filled); `undefined` when the root does not checkpoint. */
  config: CheckpointConfig | undefined;
  /** Kickoff inputs, stored in every checkpoint of the run. */
  inputs: Record<string, unknown>;
  /** The checkpoint this run continues (from runtime-state `loadCheckpoint`). */
  restored?: LoadedCheckpoint;
  /**
   * Where the root saves by itself without a config (a `@persist()` flow's store): the run's store
   * then, where it claims its lineage head, as a run with a config does in the config's store.
   * Without a claim, a second process kicking off the same state id continued it beside this one.
   * Ignored with a config, or a restored checkpoint (the run's store is where that came from).
   */
  saveTarget?: { provider: CheckpointProvider; location: string };
  /**
   * The lineage a new run starts (ignored for a restored one): a `@persist()` flow's first kickoff of
   * a state id starts the same lineage in every process, so two processes starting that state at
   * once claim one head and the second is refused. Default: a new lineage id, branch `main`.
   */
  lineage?: { lineageId?: string; branch?: string };
  /** Continue on a new lineage and branch (generated when `branch` is omitted). Needs `restored`. */
  fork?: { branch?: string };
  /**
   * The bus events go through. Named: the root joins a run active on that bus only. Default: the root
   * joins the run the caller executes in, whatever its bus (see {@link Run.current}); a new run
   * goes through the process-wide `eventBus`.
   */
  bus?: EventBus;
  /**
   * When the store fences lineage heads and another process holds (or already continued) the head
   * this run would continue: `'error'` (default) rejects with the store's `conflict` error; `'fork'`
   * continues on a new branch instead. A checkpoint its run had already gone past when it was read
   * moves to a new branch either way (a deliberate re-run); one that was the latest when read and was
   * continued since is refused with a `conflict` unless `'fork'` (see `RestoredCheckpoint`).
   */
  onConflict?: 'error' | 'fork';
  /**
   * The run continues, on purpose, a checkpoint its run went past (a flow's `rerunFrom`): the new
   * branch it moves to is said at info level, not warned about as a surprise. Default `false`.
   */
  expectNewBranch?: boolean;
  /**
   * The refusal to give when the checkpoint continued is one its run already went past, instead of
   * moving to a new branch (a paused flow's answer: answering the same question twice would run what
   * follows it twice). Ignored with `onConflict: 'fork'`, which asks for the new branch. Default: none.
   */
  refuseIfContinued?: (checkpointId: string, headId: string) => Error;
  /** How long the lease on the lineage head lasts without renewal. Default 20 s. */
  leaseTtlMs?: number;
  /**
   * Stops the run from outside (a flow's `kickoff({ abortSignal })`): every agent working in it
   * stops before its next model call and aborts the one in flight. Ignored when the root joins a run
   * already active on the bus (that run's signal applies). Default: none.
   */
  abortSignal?: AbortSignal;
  /**
   * The codec of the run's values (the kickoff inputs in each checkpoint). Default: the runtime's
   * classes and the process's registered ones; a restore given its own registry passes its codec.
   */
  valueCodec?: ValueCodec;
}

const runsByState = new WeakMap<RunState, Run>();

/**
 * One execution of a crew, flow or standalone agent: owns the {@link RuntimeState} its events are
 * recorded in, knows each entity's checkpoint config, and hands restored snapshots to nested
 * entities. Automatic checkpoints are written by a listener on the bus (see auto-checkpoint.ts).
 */
export class Run {
  readonly state: RuntimeState;
  readonly bus: EventBus;
  readonly root: CheckpointableEntity;
  /** The checkpoint this run was restored from, if any. */
  readonly restored: LoadedCheckpoint | undefined;
  /** Config for events no entity claims (signals, flow events): the root's. */
  rootConfig: CheckpointConfig | undefined;
  /** Where a manual `state.checkpoint(location)` finds the provider a location calls for. */
  readonly providers: ProviderRegistry;
  readonly #configs = new Map<string, CheckpointConfig | null>();
  /**
   * The flow (entity id) in whose method each entity joined the run, for the crews, agents and flows
   * kicked off there (see {@link noteJoinedFrom}).
   */
  readonly #joinedFrom = new Map<string, string>();
  readonly #unclaimedSnapshots: EntitySnapshot[];
  /** Saved entities that executions due to run again had started (see {@link reserveRestoredSnapshots}). */
  readonly #reserved = new Set<string>();
  #lease: LineageLease | undefined;
  /** Set when the body returned or threw (see {@link Run.ending}). */
  #ending = false;
  /** Set once {@link execute} has settled (see {@link Run.emit}). */
  #ended = false;
  /** The run this one started inside, on any bus (see {@link Run.current}). */
  #outer: Run | undefined;
  readonly #abortSignal: AbortSignal | undefined;

  private constructor(options: RunOptions) {
    this.#abortSignal = options.abortSignal;
    this.bus = options.bus ?? defaultBus;
    this.root = options.root;
    this.restored = options.restored;
    this.rootConfig = options.config;
    this.providers = options.config?.providers ?? options.restored?.providers ?? builtinRegistry;
    const store = options.config ?? options.restored ?? options.saveTarget;
    const provider = store?.provider ?? defaultProvider();
    const location = store?.location ?? DEFAULT_CHECKPOINT_LOCATION;
    const stateOptions = {
      entities: [options.root],
      inputs: options.inputs,
      provider,
      location,
      providerFor: (target: string) => this.#providerFor(target),
      bus: this.bus,
      valueCodec: options.valueCodec ?? runValueCodec(),
    };
    if (options.restored) {
      // A fork stores its origin again as it was stored, not with the edits made before the restore.
      this.state = RuntimeState.fromDocument(options.restored.document, {
        ...stateOptions,
        origin: storedDocumentOf(options.restored),
      });
      this.#unclaimedSnapshots = [...options.restored.document.entities];
      // The root was hydrated by whoever restored it; its own snapshot is not for a nested entity.
      claimSnapshot(this.#unclaimedSnapshots, options.root.entityKind, options.root.entityName, undefined, {
        started: [],
      });
    } else {
      this.state = new RuntimeState(
        options.lineage === undefined ? stateOptions : { ...stateOptions, lineage: options.lineage },
      );
      this.#unclaimedSnapshots = [];
    }
    if (options.fork) {
      if (!options.restored) {
        throw new CrewlineError(
          component,
          'invalid_argument',
          'fork needs a restored checkpoint; pass `restored` too',
        );
      }
      this.state.fork(options.fork.branch);
    }
    runsByState.set(this.state, this);
  }

  /**
   * The run the caller executes in, if any and still going: on `bus` when one is named; otherwise
   * the innermost run the caller is inside (a flow method, an event handler, a timer the run
   * started), whatever bus that run emits on. A crew or agent kicked off in a flow's method without
   * a bus of its own thus joins the flow's run even when the flow was given a bus of its own (as a
   * worker does): its events, checkpoints, restored progress and stop signal are the run's.
   */
  static current(bus?: EventBus): Run | undefined {
    if (bus === undefined) {
      let enclosing = enclosingRun.getStore();
      // An inner run that has ended (a timer of it firing later) leaves the run around it, if any.
      while (enclosing?.ending) enclosing = enclosing.#outer;
      if (enclosing !== undefined) return enclosing;
      bus = defaultBus;
    }
    const state = bus.currentState();
    const run = state ? runsByState.get(state) : undefined;
    // A timer or a promise started inside a run keeps its context after the run has ended: what it
    // kicks off then is a run of its own, not part of one that is over.
    return run?.ending ? undefined : run;
  }

  /**
   * Runs `body`, calling `onStart` with each run that starts inside it (not one a root joins), as
   * soon as the run exists: before it emits anything, and before a process signal can reach it.
   */
  static watchStarts<T>(onStart: (run: Run) => void, body: () => T): T {
    const outer = startWatcher.getStore();
    const watcher =
      outer === undefined
        ? onStart
        : (run: Run) => {
            outer(run);
            onStart(run);
          };
    return startWatcher.run(watcher, body);
  }

  /** The run that owns a state, if the state belongs to a run. */
  static ofState(state: RunState | undefined): Run | undefined {
    return state ? runsByState.get(state) : undefined;
  }

  /**
   * Runs `body` inside a run. When a run is already active on the bus (a crew kicked off inside a
   * flow method), the root joins it as one more entity instead of starting a second run.
   */
  static async execute<T>(options: RunOptions, body: (run: Run) => Promise<T>): Promise<T> {
    const bus = options.bus ?? defaultBus;
    const active = Run.current(options.bus);
    if (active) {
      // A setting of its own whose provider is still being imported (the root's is waited for below):
      // through the stand-in, its first checkpoints would start a chain of their own in a store the
      // run writes to already (the stand-in is not the provider; see loadedProvider).
      if (options.config?.provider instanceof LazyProvider) await options.config.provider.ready();
      joinRun(active.state, options.root);
      if (options.config) active.setConfigFor(options.root.entityId, options.config);
      return body(active);
    }
    installAutoCheckpoint(bus, Run.ofState);
    // SQLite is imported in the background, so that a synchronous `state.checkpoint('x.db')` of
    // this run finds it loaded.
    void registryOf(options.config)
      .load('sqlite')
      .catch(() => undefined);
    // A provider chosen from the location is imported now: a missing package fails the kickoff, and
    // the run's automatic checkpoints can be written synchronously from the first one.
    const config = options.config && {
      ...options.config,
      provider: await readyProvider(options.config.provider ?? defaultProvider()),
    };
    // The provider the root's saves go through (see `loadedProvider`): the lease is held per object.
    const saveTarget =
      config === undefined && options.restored === undefined && options.saveTarget !== undefined
        ? { ...options.saveTarget, provider: await readyProvider(options.saveTarget.provider) }
        : undefined;
    if (options.fork?.branch !== undefined && options.restored) {
      await assertNewForkBranch(
        config?.provider ?? options.restored.provider,
        config?.location ?? options.restored.location,
        options.fork.branch,
      );
    }
    const newerHead =
      options.restored && options.fork === undefined
        ? await newerHeadWithoutLeases(
            config?.provider ?? options.restored.provider,
            config?.location ?? options.restored.location,
            options.restored,
          )
        : undefined;
    const onConflict = options.onConflict ?? config?.onConflict;
    if (newerHead !== undefined && onConflict !== 'fork') {
      const { id, lineageId } = options.restored!.document.metadata;
      if (options.refuseIfContinued) throw options.refuseIfContinued(id, newerHead);
      // Continued by someone else since it was read as the latest: see claimHead.
      if (wasHeadWhenRead(options.restored!)) throw continuedSinceRead(id, newerHead, lineageId);
    }
    const run = new Run({ ...options, config, saveTarget, bus });
    run.#outer = enclosingRun.getStore();
    startWatcher.getStore()?.(run);
    if (newerHead !== undefined) {
      const branch = run.state.fork();
      (options.expectNewBranch ? logger.info : logger.warn)(
        component,
        olderCheckpointMessage(options.restored!.document.metadata.id, newerHead, branch),
      );
    }
    if (config !== undefined || options.restored !== undefined || saveTarget !== undefined) {
      run.#lease = await claimHead(run, {
        ...options,
        onConflict,
        leaseTtlMs: options.leaseTtlMs ?? config?.leaseTtlMs,
      });
    }
    const untrack = trackRunForSignals(run);
    try {
      // The bus's scope covers the run's end until what it queued is written: what its handlers emit
      // meanwhile is still the run's. Then it ends, before the lease is released (a round trip to a
      // remote store): a timer the run left behind emits outside it from there on.
      return await bus.runInScope(run.state, async () => {
        try {
          return await enclosingRun.run(run, () => body(run));
        } catch (error) {
          // A run stopped because another process took its lineage over says so, not "aborted".
          throw run.#lease?.lostBecause ?? error;
        } finally {
          // Async handlers (a user's `await state.acheckpoint()`), prunes and background writes all
          // finish before kickoff returns; a signal meanwhile waits for them (see trackRunForSignals).
          run.#ending = true;
          try {
            await run.bus.flush();
            await run.state.settle();
            // Nothing made ahead for its next writes stays in its locations (not on a signal's way
            // out, which closes the providers instead).
            await run.state.runEnded();
          } finally {
            run.#ended = true;
          }
        }
      });
    } finally {
      try {
        await run.#lease?.release();
      } finally {
        untrack();
      }
    }
  }

  /** Aborted when this run lost the lease on its lineage head: it must stop calling models. */
  get fenceSignal(): AbortSignal | undefined {
    return this.#lease?.signal;
  }

  /**
   * Throws when this run may no longer call models or tools because its lease on the lineage head
   * was lost, or ran out without a confirmed renewal and could not be claimed again (a `conflict`
   * error); resolves at once without a lease.
   */
  async ensureLeaseHeld(): Promise<void> {
    await this.#lease?.ensureHeld();
  }

  /** The signal the run was started with (see {@link RunOptions.abortSignal}), if any. */
  get abortSignal(): AbortSignal | undefined {
    return this.#abortSignal;
  }

  /** True once the run's body returned or threw, while it writes what it queued (see {@link execute}). */
  get ending(): boolean {
    return this.#ending;
  }

  /** True while this run holds a lease on its lineage head. */
  get holdsLease(): boolean {
    return this.#lease !== undefined && !this.#lease.signal.aborted;
  }

  /** Gives up the lease now (the process is about to end on a signal); nothing without one. */
  async releaseLease(): Promise<void> {
    await this.#lease?.release();
  }

  /**
   * Emits an event inside this run: recorded in its history; triggers automatic checkpoints. Once
   * the run has ended (a timer of one of its tools firing later), the event is emitted where it is
   * called from, as `bus.emit` would: outside any run, or in the run the caller executes in.
   */
  emit(source: unknown, event: BaseEvent): void {
    this.bus.emit(source, event, this.#ended ? undefined : this.state);
  }

  /** Like {@link emit}, and waits for async handlers (e.g. a handler calling `acheckpoint`). */
  async emitAsync(source: unknown, event: BaseEvent): Promise<void> {
    await this.bus.emitAsync(source, event, this.#ended ? undefined : this.state);
  }

  /**
   * Sets the config used for events of one entity (an agent's own config, or `null` for an agent
   * with `checkpoint: false`). `undefined` removes it, so the entity inherits again.
   */
  setConfigFor(entityId: string, config: CheckpointConfig | undefined | null): void {
    if (config === undefined) this.#configs.delete(entityId);
    else this.#configs.set(entityId, config === null ? null : withDefaultProvider(config));
  }

  /**
   * Notes that `entityId` joined the run from a method of the flow `flowEntityId`: without a setting
   * of its own, its events follow that flow's (see {@link configForEvent}).
   */
  noteJoinedFrom(entityId: string, flowEntityId: string): void {
    if (entityId !== flowEntityId) this.#joinedFrom.set(entityId, flowEntityId);
  }

  /**
   * The config that applies to an event: the most specific entity named in its context that has a
   * setting of its own (agent, then crew, then flow); else the setting of the flow that entity was
   * kicked off in, or of the flow that one was kicked off in, and so on; else the root's. `undefined`
   * when off. Only a flow's own events name the flow: without the flow it joined from, a crew or agent
   * kicked off in a nested flow with `checkpoint: false`, or with a config of its own, was
   * checkpointed under the root's setting.
   */
  configForEvent(event: BaseEvent): CheckpointConfig | undefined {
    const context = event.context;
    const named = [context.agentId, context.crewId, context.flowId];
    for (const entityId of named) {
      if (entityId === undefined) continue;
      const entry = this.#configs.get(entityId);
      if (entry === null) return undefined;
      if (entry !== undefined) return entry;
    }
    if (this.#joinedFrom.size === 0) return this.rootConfig;
    const joined = named.find((entityId) => entityId !== undefined && this.#joinedFrom.has(entityId));
    let flow = joined === undefined ? undefined : this.#joinedFrom.get(joined);
    // Each step goes to the flow the last one was kicked off in; bounded, so that no chain loops.
    for (let steps = 0; flow !== undefined && steps < this.#joinedFrom.size; steps += 1) {
      const entry = this.#configs.get(flow);
      if (entry === null) return undefined;
      if (entry !== undefined) return entry;
      flow = this.#joinedFrom.get(flow);
    }
    return this.rootConfig;
  }

  /**
   * The saved snapshot for a nested entity created during a restored run: the one saved under `key`,
   * when the creator gives a stable key; else the next one of its kind and name that the flow
   * method's execution it is kicked off in had started when saved (see `claimStartedFirst`); else
   * the n-th crew named X created in this run gets the n-th saved snapshot of X that no execution
   * due to run again had started. Each snapshot is handed out once.
   */
  takeRestoredSnapshot(kind: EntityKind, name: string, key?: string): EntitySnapshot | undefined {
    return claimSnapshot(this.#unclaimedSnapshots, kind, name, key, { reserved: this.#reserved });
  }

  /**
   * Leaves the saved entities with these ids (what the executions of a restored flow that run again
   * had started) to those executions: a crew kicked off elsewhere does not take them up by name.
   * Until they do, their saved snapshots (and, for a saved flow, the work it holds) stand in for them
   * in the run's entities, so a checkpoint written meanwhile still holds that work; the entity that
   * takes one up replaces its stand-in (see `RuntimeState.addEntity`).
   */
  reserveRestoredSnapshots(ids: Iterable<string>): void {
    const reserved = [...ids];
    for (const id of reserved) this.#reserved.add(id);
    const summaries = this.restored?.document.metadata.entities ?? [];
    for (const snapshot of savedWorkOf(this.#unclaimedSnapshots, reserved)) {
      // Joined already: carried as the work of a completed method, or a stand-in of an outer flow's.
      if (this.state.entities.some((entity) => entity.entityId === snapshot.id)) continue;
      const summary = summaries.find((entity) => entity.kind === snapshot.kind && entity.id === snapshot.id);
      joinRun(this.state, keptEntity(snapshot, summary, { standIn: true }));
    }
  }

  /**
   * Forgets the saved entities with these ids (what the executions of a method re-run from a save
   * taken while it ran had started) and the work a saved flow among them holds: nobody takes them
   * up, by id or by name, and they stand in for nothing, so the method's crews start afresh.
   */
  discardRestoredSnapshots(ids: Iterable<string>): void {
    const discarded = new Set(savedWorkOf(this.#unclaimedSnapshots, ids));
    for (let index = this.#unclaimedSnapshots.length - 1; index >= 0; index -= 1) {
      if (discarded.has(this.#unclaimedSnapshots[index]!)) this.#unclaimedSnapshots.splice(index, 1);
    }
  }

  /**
   * The saved snapshot of an entity a restored flow's execution names (by its id, or by name in older
   * checkpoints), if nobody took it yet: what a flow sets aside for the crews its completed methods
   * ran (see `carryNestedSnapshots`).
   */
  takeSavedEntity(entity: StartedEntity): EntitySnapshot | undefined {
    return claimSavedEntity(this.#unclaimedSnapshots, entity, { reserved: this.#reserved });
  }

  /**
   * Picks the provider for a manual `state.checkpoint(location)`: a configured provider of the kind
   * the run's registry says the location is, else that entry's shared provider (a stand-in while its
   * package is still being imported: `acheckpoint()` waits for it, `checkpoint()` says so).
   */
  #providerFor(location: string): CheckpointProvider {
    const kind = this.providers.requireEntryFor(location).name;
    const candidates = [
      this.rootConfig?.provider,
      ...[...this.#configs.values()].map((config) => config?.provider),
    ];
    const configured = candidates.find((provider) => provider !== undefined && provider.kind === kind);
    if (configured) return configured;
    return this.providers.provider(kind);
  }
}

/**
 * Claims the lineage head a run is about to write to, in stores that fence heads: the restored
 * checkpoint when the run continues one, else its new lineage. On a refusal, `onConflict: 'fork'`
 * moves the run to a new branch and claims that instead.
 */
async function claimHead(run: Run, options: RunOptions): Promise<LineageLease | undefined> {
  const { state } = run;
  const provider = state.provider;
  if (provider === undefined) return undefined;
  const claim = (checkpointId: string | null) =>
    LineageLease.claim({
      provider,
      location: state.location,
      state,
      checkpointId,
      // A crew without a name is named "crew": said once ("crew on HOST"), not "crew crew on HOST".
      what:
        run.root.entityName === run.root.entityKind || run.root.entityName === ''
          ? run.root.entityKind
          : `${run.root.entityKind} ${run.root.entityName}`,
      ttlMs: options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
    });
  const restored = options.restored;
  // The head is the restored checkpoint only in the store it came from; a run restored from one
  // location and writing to another starts its lineage there.
  const continues =
    restored !== undefined &&
    options.fork === undefined &&
    restored.provider.kind === provider.kind &&
    restored.location === provider.resolveLocation(state.location);
  if (!continues) return claim(null);
  try {
    return await claim(restored.document.metadata.id);
  } catch (error) {
    if (!CrewlineError.hasCode(error, 'conflict')) throw error;
    // A checkpoint its run already went past is continued the only way that leaves that run's own
    // history whole: on a new branch. A run someone is continuing right now is theirs, unless the
    // caller asked to fork in that case too.
    const continuedAlready = typeof error.details?.headId === 'string';
    if (!continuedAlready && options.onConflict !== 'fork') throw error;
    if (continuedAlready && options.onConflict !== 'fork') {
      const { id, lineageId } = restored.document.metadata;
      const headId = error.details!.headId as string;
      if (options.refuseIfContinued) throw options.refuseIfContinued(id, headId);
      // The checkpoint was the latest when it was read, and someone continued the run before this
      // claim (its holder wrote more and let go meanwhile): a new branch would pay for that work
      // again. Only a checkpoint read as one its run had gone past is re-run on a new branch.
      if (wasHeadWhenRead(restored)) throw continuedSinceRead(id, headId, lineageId);
    }
    const branch = state.fork();
    const message = forkOnConflictMessage(error, restored.document.metadata.id, branch);
    // A re-run moving off a save its run went past asked for it; anything else is a surprise.
    if (continuedAlready && options.expectNewBranch) logger.info(component, message);
    else logger.warn(component, message);
    return claim(null);
  }
}
