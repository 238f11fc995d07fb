import { randomUUID } from 'node:crypto';
import {
  type BaseEvent,
  CheckpointCompletedEvent,
  CheckpointFailedEvent,
  CheckpointForkCompletedEvent,
  CheckpointForkStartedEvent,
  CheckpointPrunedEvent,
  CheckpointStartedEvent,
  CrewlineError,
  checkpointLifecycleEventTypes,
  eventBus as defaultBus,
  type EventBus,
  type EventRecord,
  logger,
  type RunState,
} from '@crewline/events';
import { createCheckpointWrite } from './checkpoint-write.js';
import type {
  CheckpointDocument,
  CheckpointMetadata,
  EntityKind,
  EntitySnapshot,
  EntitySummary,
} from './document.js';
import { stateError } from './errors.js';
import { ForkOrigin } from './fork-origin.js';
import {
  branchNameRule,
  isValidBranchName,
  isValidCheckpointId,
  newCheckpointId,
  newForkBranchName,
  newLineageId,
} from './ids.js';
import { registerInputSecrets } from './input-secrets.js';
import type { JsonObject } from './json.js';
import { keptEntity } from './kept-entity.js';
import { loadedProvider } from './lazy-provider.js';
import { LineagePositions } from './lineage-positions.js';
import type { CheckpointProvider, CheckpointWrite, LeaseToken, StoredCheckpoint } from './provider.js';
import { refuseRedactedInputsInUse } from './redacted-inputs.js';
import { redactSecrets } from './redaction.js';
import { SettledTextCache } from './settled-text.js';
import { SettledValues } from './settled-values.js';
import { StoredInputs } from './stored-inputs.js';
import { UnchangedSnapshots } from './unchanged-snapshots.js';
import { decodeValue, toJsonSafe, type ValueCodec } from './value-codec.js';
import { WriteQueue } from './write-queue.js';

declare module '@crewline/events' {
  interface RunStateTypes {
    state: RuntimeState;
  }
}

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
   * {@link RuntimeState.addEntity}).
   */
  readonly standIn?: boolean;
  /**
   * Gives the entity an id of its own, when another object of the run it joins has its id already
   * (a flow's id is its state id, which two Flow objects kicked off for one state share). Optional:
   * without it, such a second object is refused.
   */
  renewEntityId?(): void;
}

export interface Lineage {
  /** Groups the checkpoints of one run and its resumptions; a fork gets a new one. */
  lineageId: string;
  /**
   * The run's last checkpoint, written (to any location) or restored. The parent of the next write
   * to a location is the run's last checkpoint in that location (or, before its first write there,
   * the checkpoint the run was restored from): a run writing to two locations keeps a chain in each.
   */
  checkpointId: string | null;
  /** Parent of `checkpointId`. */
  parentId: string | null;
  branch: string;
}

export interface RuntimeStateOptions {
  runId?: string;
  entities?: CheckpointableEntity[];
  inputs?: Record<string, unknown>;
  /** Provider for `checkpoint()` without a location and for locations `providerFor` does not claim. */
  provider?: CheckpointProvider;
  /** Location for `checkpoint()` without an argument. Default `'./.checkpoints'`. */
  location?: string;
  /** Picks the provider for `checkpoint(location)`; defaults to `provider`. */
  providerFor?: (location: string) => CheckpointProvider | undefined;
  bus?: EventBus;
  lineage?: Partial<Lineage>;
  /** Event history restored from a checkpoint. */
  events?: EventRecord[];
  /** Encodes `inputs` into each checkpoint; default: one with no classes registered. */
  valueCodec?: ValueCodec;
}

/**
 * The lease a run holds on its lineage head in one store. Writes to that provider and location
 * carry the token, so the store refuses them once the lease is lost; writes elsewhere (a manual
 * `state.checkpoint('./copy')`) do not.
 */
export interface HeldLease {
  provider: CheckpointProvider;
  /** The resolved location (as `provider.resolveLocation` returns it). */
  location: string;
  token: LeaseToken;
  /** Called when a write under the lease was refused with `conflict`: the lease is lost. */
  onLost?: (error: unknown) => void;
}

export interface WriteOptions {
  provider?: CheckpointProvider;
  location?: string;
  /** What caused the write: an event type, or `manual` (the default). */
  trigger?: string;
  /** Prune this run (its lineage) to this many checkpoints after the write (best-effort). */
  maxCheckpoints?: number;
}

const lifecycle: ReadonlySet<string> = new Set(checkpointLifecycleEventTypes);
const component = 'runtime-state';

/**
 * `bus.wants(type)`; true when the bus comes from an older copy of `@crewline/events` without that
 * method (copies share one bus), so its listeners still get every event.
 */
function busWants(bus: EventBus, type: string): boolean {
  return typeof bus.wants !== 'function' || bus.wants(type);
}

/**
 * Everything one run consists of: its entities, inputs, event history and lineage. Writes
 * checkpoints through a provider; every write names the run's previous one in the same location as
 * its parent (see {@link LineagePositions}).
 */
export class RuntimeState implements RunState {
  readonly runId: string;
  entities: CheckpointableEntity[];
  inputs: Record<string, unknown>;
  readonly events: EventRecord[];
  readonly lineage: Lineage;
  /** The trigger of the last write. */
  lastTrigger: string | undefined;
  #lastStored: StoredCheckpoint | undefined;
  /** What this run's entities settled: redacted once, and handed to the provider with each write. */
  readonly settled = new SettledValues();
  provider: CheckpointProvider | undefined;
  location: string;
  readonly #providerFor: ((location: string) => CheckpointProvider | undefined) | undefined;
  /** The lease on this run's lineage head, when its store fences heads (see {@link HeldLease}). */
  lease: HeldLease | undefined;
  readonly #bus: EventBus;
  readonly #valueCodec: ValueCodec | undefined;
  readonly #eventTexts: (string | undefined)[] = [];
  readonly #eventBytes: (Buffer | undefined)[] = [];
  readonly #settledTexts = new SettledTextCache();
  /** Each entity's last redacted snapshot, given again while its content stays the same. */
  readonly #unchangedSnapshots = new UnchangedSnapshots();
  /** The inputs as the last checkpoint stored them, given again while they stay the same. */
  readonly #storedInputs = new StoredInputs();
  /** Where the run's chain stands in each location it writes to: the parent of its next write there. */
  readonly #positions: LineagePositions;
  /** The checkpoint this state was restored from, as stored (see {@link fromDocument}). */
  #restored: CheckpointDocument | undefined;
  /** After {@link fork}: the restored checkpoint, stored again beside the fork's first write in each location. */
  #forkOrigin: ForkOrigin | undefined;
  #lastResolved:
    | { provider: CheckpointProvider; location: string; directory: string; resolved: string }
    | undefined;
  #pending = new Set<Promise<unknown>>();
  /** The checkpoints taken for a write in the background, written in order (see write-queue.ts). */
  readonly #writes = new WriteQueue();

  constructor(options: RuntimeStateOptions = {}) {
    this.runId = options.runId ?? randomUUID();
    this.entities = options.entities ?? [];
    this.inputs = options.inputs ?? {};
    // Before the run writes anything: an input redacted by its name (`apiKey`) also fills task
    // descriptions and prompts, where only its value can be found.
    registerInputSecrets(this.inputs);
    this.events = options.events ? [...options.events] : [];
    this.provider = options.provider;
    this.location = options.location ?? './.checkpoints';
    this.#providerFor = options.providerFor;
    this.#bus = options.bus ?? defaultBus;
    this.#valueCodec = options.valueCodec;
    const branch = options.lineage?.branch ?? 'main';
    if (!isValidBranchName(branch))
      throw stateError('invalid_name', `branch name "${branch}" is not allowed`);
    const lineageId = options.lineage?.lineageId ?? newLineageId();
    if (!isValidCheckpointId(lineageId))
      throw stateError(
        'invalid_name',
        `lineage id ${JSON.stringify(lineageId)} is not allowed; use letters, digits, "_", "." and "-"`,
      );
    this.lineage = {
      lineageId,
      checkpointId: options.lineage?.checkpointId ?? null,
      parentId: options.lineage?.parentId ?? null,
      branch,
    };
    this.#positions = new LineagePositions({
      checkpointId: this.lineage.checkpointId,
      eventCount: this.events.length,
    });
  }

  /**
   * Rebuilds the non-entity part of a run from a stored checkpoint (entities are the runtime's job).
   * `origin` is that checkpoint as stored when `document` is an edited copy of it (task outputs
   * replaced before the restore): a fork stores the origin again (see ForkOrigin), and the edit is
   * the fork's, never the stored checkpoint's. Default: `document`.
   *
   * Refuses (`invalid_argument`, before anything runs) to continue work that would fill a template
   * with an input the checkpoint stored as `[REDACTED]` and `options.inputs` does not give again:
   * see {@link RuntimeState.refuseRedactedInputs}.
   */
  static fromDocument(
    document: CheckpointDocument,
    options: Omit<RuntimeStateOptions, 'events' | 'lineage'> & { origin?: CheckpointDocument } = {},
  ) {
    const { metadata } = document;
    const { origin, ...stateOptions } = options;
    if (origin !== undefined && origin.metadata.id !== metadata.id) {
      throw stateError(
        'invalid_argument',
        `the origin of a restored run must be the checkpoint it was restored from (${metadata.id}), got ${origin.metadata.id}`,
      );
    }
    const inputs =
      options.inputs ?? decodeValue<Record<string, unknown>>(document.inputs, options.valueCodec);
    RuntimeState.refuseRedactedInputs(document, inputs);
    const state = new RuntimeState({
      ...stateOptions,
      inputs,
      events: document.events,
      lineage: {
        lineageId: metadata.lineageId,
        checkpointId: metadata.id,
        parentId: metadata.parentId,
        branch: metadata.branch,
      },
    });
    state.#restored = origin ?? document;
    return state;
  }

  /**
   * Refuses a continuation of `document` given `inputs` (what the caller passes, laid over the
   * inputs the checkpoint stored) that would fill a template of unfinished work (a crew's pending
   * tasks, a standalone agent) with an input stored as `[REDACTED]`: the model would be sent that
   * text where the kickoff had the value. The `invalid_argument` error names each input and how to
   * pass it again. {@link fromDocument} checks this; callers that check a continuation before
   * starting it (the runtime's `checkContinuation`, the CLI before it says anything) call this. The
   * stored inputs are read as stored (their encoded JSON), so the check needs none of the classes
   * they hold registered; one stored redacted counts even where `inputs` leaves it out (a restored
   * standalone agent runs with only the inputs its kickoff passes).
   */
  static refuseRedactedInputs(
    document: CheckpointDocument,
    inputs: Readonly<Record<string, unknown>> | undefined,
  ): void {
    const stored = document.inputs.json;
    const saved =
      stored !== null && typeof stored === 'object' && !Array.isArray(stored) ? (stored as JsonObject) : {};
    refuseRedactedInputsInUse(document, { ...saved, ...(inputs ?? {}) });
  }

  get bus(): EventBus {
    return this.#bus;
  }

  /**
   * Adds an entity to the run. One joining under the id of a stand-in (see
   * {@link CheckpointableEntity.standIn}) takes its place: the run's entities stay in saved order.
   */
  addEntity(entity: CheckpointableEntity): void {
    const standIn = this.entities.findIndex(
      (known) => known.standIn === true && known.entityId === entity.entityId,
    );
    if (standIn >= 0 && entity.standIn !== true) {
      this.entities[standIn] = entity;
      return;
    }
    let existing = this.entities.find((known) => known.entityId === entity.entityId);
    if (existing !== undefined && existing !== entity && entity.renewEntityId !== undefined) {
      entity.renewEntityId();
      existing = this.entities.find((known) => known.entityId === entity.entityId);
    }
    if (existing === undefined) this.entities.push(entity);
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
   * Before an entity of this run is kicked off again in it (a crew in a loop of a flow method, or
   * kept on the flow and kicked off by two methods): keeps what its earlier kickoff left, as it is
   * now, as an entity of its own in the entity's place, and takes the object out of the run. Each
   * kickoff is then one entity of every later checkpoint, in the order they started, and a restored
   * run hands the n-th kickoff the n-th one's saved work; the new kickoff joins the run again (under
   * an `entityId` of its own: the caller gives it one). False when the entity is not part of this run.
   */
  keepEarlierKickoff(entity: CheckpointableEntity): boolean {
    const index = this.entities.indexOf(entity);
    if (index >= 0) {
      this.entities[index] = keptEntity(entity.snapshotEntity(this.settled), entity.summarizeEntity());
      return true;
    }
    // Its id names an entity the run holds already: what a restored run carries of this very
    // object's earlier kickoff (saved work of a method that completed). This kickoff is another.
    return this.entities.some((existing) => existing.entityId === entity.entityId);
  }

  /** Appends an event to the history (redacted, JSON-safe) and gives it its sequence number. */
  recordEvent(event: BaseEvent): void {
    if (lifecycle.has(event.type)) return;
    event.sequence = this.events.length + 1;
    // A crew or flow kicked off inside the run (a flow's method) brings inputs of its own: redacted
    // by value before the tasks they fill are recorded.
    const inputs = (event as { inputs?: unknown }).inputs;
    if (inputs !== undefined) registerInputSecrets(inputs);
    const record = redactSecrets(toJsonSafe(event.toJSON())) as EventRecord;
    this.events.push(record);
  }

  /**
   * Builds the metadata and document of a checkpoint of this run as it is now, naming `parentId`
   * (default: the run's last checkpoint) as its parent.
   */
  snapshot(
    trigger = 'manual',
    parentId: string | null = this.lineage.checkpointId,
  ): { metadata: CheckpointMetadata; entities: EntitySnapshot[] } {
    const entities = this.entities.map((entity) =>
      this.#unchangedSnapshots.redacted(entity, entity.snapshotEntity(this.settled), this.settled),
    );
    const metadata: CheckpointMetadata = {
      id: newCheckpointId(Date.now(), this.lineage.checkpointId),
      createdAt: new Date().toISOString(),
      lineageId: this.lineage.lineageId,
      parentId,
      branch: this.lineage.branch,
      trigger,
      entities: this.entities.map((entity) => entity.summarizeEntity()),
      eventCount: this.events.length,
    };
    return { metadata, entities };
  }

  #prepare(options: WriteOptions) {
    const location = options.location ?? this.location;
    const chosen =
      options.provider ??
      (options.location ? this.#providerFor?.(options.location) : undefined) ??
      this.provider;
    if (!chosen) {
      throw stateError(
        'invalid_config',
        'no checkpoint provider configured for this run; pass a provider or location',
      );
    }
    // One object per store: see loadedProvider.
    const provider = loadedProvider(chosen);
    const resolvedLocation = this.#resolvedLocation(provider, location);
    const trigger = options.trigger ?? 'manual';
    const position = this.#positions.at(provider, resolvedLocation);
    // Before the entities: a credential set in the inputs since the last checkpoint is registered
    // here (see StoredInputs), and the entities' snapshots of this very checkpoint must not hold it.
    const inputs = this.#storedInputs.stored(this.inputs, this.#valueCodec, this.settled);
    const { metadata, entities } = this.snapshot(trigger, position.checkpointId);
    // A fork's first checkpoint in this location: its origin goes with it (see ForkOrigin).
    const companion =
      this.#forkOrigin !== undefined && position.checkpointId === this.#forkOrigin.id
        ? this.#forkOrigin.write
        : undefined;
    const write = createCheckpointWrite({
      metadata,
      inputs,
      entities,
      events: this.events.slice(),
      parentEventCount: position.eventCount,
      eventTexts: this.#eventTexts,
      eventBytes: this.#eventBytes,
      settled: this.settled,
      settledTexts: this.#settledTexts,
      lease:
        this.lease !== undefined &&
        this.lease.provider === provider &&
        this.lease.location === resolvedLocation
          ? this.lease.token
          : undefined,
    });
    const previous = { checkpointId: this.lineage.checkpointId, parentId: this.lineage.parentId };
    // Claim the lineage position in this location now, so that a second write to it started before
    // this one finishes names this one as its parent. Undone if the write fails.
    const undoPosition = this.#positions.advance(provider, resolvedLocation, {
      checkpointId: metadata.id,
      eventCount: metadata.eventCount,
    });
    this.lineage.parentId = metadata.parentId;
    this.lineage.checkpointId = metadata.id;
    this.lastTrigger = trigger;
    const base = {
      location: resolvedLocation,
      provider: provider.kind,
      trigger,
      branch: metadata.branch,
      parentId: metadata.parentId,
    };
    // Lifecycle events are for observers only (a run does not record them): built when one listens.
    if (busWants(this.#bus, CheckpointStartedEvent.type))
      this.#bus.emit(this, new CheckpointStartedEvent(base), this);
    const started = performance.now();
    const succeed = (stored: StoredCheckpoint) => {
      this.#lastStored = stored;
      if (busWants(this.#bus, CheckpointCompletedEvent.type)) {
        this.#bus.emit(
          this,
          new CheckpointCompletedEvent({
            ...base,
            checkpointId: stored.id,
            reference: stored.reference,
            durationMs: performance.now() - started,
          }),
          this,
        );
      }
      if (options.maxCheckpoints !== undefined)
        this.#prune(provider, resolvedLocation, options.maxCheckpoints);
      return stored;
    };
    const fail = (error: unknown): never => {
      if (write.lease !== undefined && CrewlineError.hasCode(error, 'conflict')) this.lease?.onLost?.(error);
      undoPosition();
      if (this.lineage.checkpointId === metadata.id) {
        this.lineage.checkpointId = previous.checkpointId;
        this.lineage.parentId = previous.parentId;
      }
      this.#bus.emit(this, new CheckpointFailedEvent({ ...base, error: describe(error) }), this);
      throw error;
    };
    return { provider, resolvedLocation, write, companion, succeed, fail };
  }

  /** Logs that a fork's origin could not be stored again (best-effort: the fork's checkpoint is stored). */
  #companionFailed(companion: CheckpointWrite, location: string, error: unknown): void {
    logger.warn(
      component,
      `checkpoint ${companion.metadata.id}, which branch "${this.lineage.branch}" was forked from, could not be stored again in ${location}; if its run pruned it, the fork's first checkpoint there names a missing parent`,
      error,
    );
  }

  /**
   * `provider.resolveLocation(location)`, kept for the location this run writes to: an automatic
   * checkpoint on every event resolved the same location each time. A location is resolved against
   * the working directory, so a new one resolves it again.
   */
  #resolvedLocation(provider: CheckpointProvider, location: string): string {
    const directory = process.cwd();
    const last = this.#lastResolved;
    if (
      last !== undefined &&
      last.provider === provider &&
      last.location === location &&
      last.directory === directory
    )
      return last.resolved;
    const resolved = provider.resolveLocation(location);
    this.#lastResolved = { provider, location, directory, resolved };
    return resolved;
  }

  #prune(provider: CheckpointProvider, location: string, keep: number): void {
    const { branch, lineageId } = this.lineage;
    // Retention is this run's own business: other runs in the same location (and on the same branch)
    // keep every checkpoint, and so do fork points and the run's newest (see planPrune).
    const pruning = provider
      .prune(location, { keep, lineageId })
      .then((result) => {
        if (result.removed.length > 0) {
          this.#bus.emit(
            this,
            new CheckpointPrunedEvent({
              location,
              provider: provider.kind,
              branch,
              removedCount: result.removed.length,
              maxCheckpoints: keep,
            }),
            this,
          );
        }
      })
      .catch((error: unknown) =>
        logger.warn(component, `pruning ${location} (run ${lineageId} on branch ${branch}) failed`, error),
      );
    this.#track(pruning);
  }

  #track(promise: Promise<unknown>): void {
    this.#pending.add(promise);
    void promise.finally(() => this.#pending.delete(promise));
  }

  /**
   * The last checkpoint this state stored (its reference, id, lineage and branch), or `undefined`
   * before its first write. A checkpoint still queued for a background write is not stored yet.
   */
  get lastStored(): StoredCheckpoint | undefined {
    return this.#lastStored;
  }

  /** Writes a checkpoint synchronously with explicit options; throws on failure. */
  writeCheckpointSync(options: WriteOptions = {}): StoredCheckpoint {
    const { provider, resolvedLocation, write, companion, succeed, fail } = this.#prepare(options);
    if (!provider.writeSync) {
      return fail(
        stateError(
          'invalid_config',
          `the ${provider.kind} provider cannot write synchronously; use acheckpoint() or an async handler`,
        ),
      );
    }
    const stopped = this.#writes.writeAheadSync(provider, resolvedLocation);
    if (stopped !== undefined) {
      // A checkpoint queued ahead of this one (its parent, or an ancestor) could not be written:
      // this one is not written either, and the lineage goes back to the last one stored.
      try {
        fail(stopped.error);
      } finally {
        stopped.rejectRest();
      }
    }
    // Right before the fork's first checkpoint, and once more right after it: see ForkOrigin.
    const copied =
      companion === undefined || this.#storeCompanionSync(provider, resolvedLocation, companion, true);
    let stored: StoredCheckpoint;
    try {
      stored = provider.writeSync(resolvedLocation, write);
    } catch (error) {
      return fail(error);
    }
    if (companion !== undefined) this.#storeCompanionSync(provider, resolvedLocation, companion, copied);
    return succeed(stored);
  }

  /** Stores a fork's origin again (see ForkOrigin); a failure is logged when `report`. */
  #storeCompanionSync(
    provider: CheckpointProvider,
    location: string,
    companion: CheckpointWrite,
    report: boolean,
  ): boolean {
    try {
      // Only called once writeCheckpointSync found writeSync.
      provider.writeSync?.(location, companion);
      return true;
    } catch (error) {
      if (report) this.#companionFailed(companion, location, error);
      return false;
    }
  }

  /** Writes a checkpoint with explicit options; rejects on failure. */
  async writeCheckpoint(options: WriteOptions = {}): Promise<StoredCheckpoint> {
    const { provider, resolvedLocation, write, companion, succeed, fail } = this.#prepare(options);
    let companionWritten: Promise<void>[] | undefined;
    const writing = new Promise<StoredCheckpoint>((resolve, reject) => {
      // Reported as soon as the write ends, so that completions are reported in the order the writes
      // end (events, lastStored), and once: a write in flight may be written again by a strict
      // checkpoint (see WriteQueue.writeAheadSync) and end twice.
      let settled = false;
      const settle = (report: () => StoredCheckpoint) => {
        if (settled) return;
        settled = true;
        try {
          resolve(report());
        } catch (error) {
          reject(error);
        }
      };
      // A fork's origin is queued right before its first checkpoint and once more right after it (see
      // ForkOrigin), each tracked like a checkpoint: the run ends (and kickoff returns) once written.
      let copyFailed = false;
      const queueCompanion = (report: () => boolean): Promise<void> =>
        new Promise<void>((written) => {
          this.#writes.enqueue({
            provider,
            location: resolvedLocation,
            write: companion!,
            companion: true,
            resolve: () => written(),
            reject: (error) => {
              if (report()) this.#companionFailed(companion!, resolvedLocation, error);
              copyFailed = true;
              written();
            },
          });
        });
      if (companion !== undefined) companionWritten = [queueCompanion(() => true)];
      this.#writes.enqueue({
        provider,
        location: resolvedLocation,
        write,
        resolve: (stored) => settle(() => succeed(stored)),
        reject: (error) => settle(() => fail(error)),
      });
      if (companion !== undefined) companionWritten?.push(queueCompanion(() => !copyFailed));
    });
    this.#track(writing.catch(() => undefined));
    for (const written of companionWritten ?? []) this.#track(written);
    return writing;
  }

  /**
   * Resolves once every checkpoint write started before the call has finished (stored, or failed and
   * reported): the barrier a run passes before it sends a model or tool call, so that a completion a
   * checkpoint holds is on disk before anything else is paid for. At once when nothing is queued.
   */
  durable(): Promise<void> {
    return this.#writes.durable();
  }

  /**
   * Writes, synchronously and in order, the checkpoints still queued for an async write (the
   * process is exiting: no promise will settle any more). A write in flight is written again whole,
   * under its own id; a provider without `writeSync` cannot, and its queued checkpoints are lost.
   * Failures are logged. Returns how many were written.
   */
  writePendingSync(): number {
    return this.#writes.writePendingSync();
  }

  /**
   * Writes a checkpoint now and returns its reference. Throws on failure (unlike automatic
   * checkpoints, which are best-effort).
   */
  checkpoint(location?: string): string {
    return this.writeCheckpointSync(location === undefined ? {} : { location }).reference;
  }

  /** Async {@link checkpoint}. */
  async acheckpoint(location?: string): Promise<string> {
    return (await this.writeCheckpoint(location === undefined ? {} : { location })).reference;
  }

  /**
   * Moves this run onto a new branch and lineage. No checkpoint is written; the next write to each
   * location names the run's last checkpoint there (before any write: the checkpoint this state came
   * from) as its parent, so the fork point is recoverable from storage. A state restored from a
   * checkpoint (see {@link fromDocument}) stores that checkpoint again right before its first write
   * to each location, in case its run pruned it meanwhile (see ForkOrigin).
   */
  fork(branch?: string): string {
    const next = branch ?? newForkBranchName(this.lineage.checkpointId);
    if (!isValidBranchName(next)) {
      throw stateError('invalid_name', `branch name "${next}" is not allowed; ${branchNameRule}`);
    }
    const parentBranch = this.lineage.branch;
    const parentCheckpointId = this.lineage.checkpointId;
    this.#bus.emit(
      this,
      new CheckpointForkStartedEvent({ branch: next, parentBranch, parentCheckpointId }),
      this,
    );
    this.lineage.branch = next;
    this.lineage.lineageId = newLineageId();
    if (this.#restored !== undefined) this.#forkOrigin ??= new ForkOrigin(this.#restored);
    // A lease fences the lineage it was granted for; the new lineage needs a claim of its own.
    this.lease = undefined;
    this.#bus.emit(
      this,
      new CheckpointForkCompletedEvent({ branch: next, parentBranch, parentCheckpointId }),
      this,
    );
    return next;
  }

  /** True while a write or prune started by this state is in flight (what {@link settle} waits for). */
  get hasPendingWork(): boolean {
    return this.#pending.size > 0;
  }

  /** Waits for writes and prunes started by this state. */
  async settle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /**
   * The run ended and its writes settled ({@link settle}): tells the provider of every location it
   * wrote to (`runEnded`), so that nothing made ahead for its next writes is left there (JsonProvider's
   * spare temp files). Best-effort: a failure is logged, the run's result stands.
   */
  async runEnded(): Promise<void> {
    await Promise.all(
      this.#positions.stores().map(async ({ provider, location }) => {
        try {
          await provider.runEnded?.(location);
        } catch (error) {
          logger.warn(component, `tidying ${location} after the run (${provider.kind}) failed`, error);
        }
      }),
    );
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
