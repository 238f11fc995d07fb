import { randomUUID } from 'node:crypto';
import {
  type BaseEvent,
  CheckpointForkCompletedEvent,
  CheckpointForkStartedEvent,
  checkpointLifecycleEventTypes,
  eventBus as defaultBus,
  type EventBus,
  type EventRecord,
  logger,
  type RunState,
} from '@crewline/events';
import type { CheckpointDocument, CheckpointMetadata, EntitySnapshot } from './document.js';
import { component, stateError } from './errors.js';
import { branchNameRule, isValidBranchName, newForkBranchName, newLineageId } from './ids.js';
import { registerInputSecrets } from './input-secrets.js';
import type { JsonObject } from './json.js';
import type { CheckpointProvider, StoredCheckpoint } from './provider.js';
import { refuseRedactedInputsInUse } from './redacted-inputs.js';
import { redactSecrets } from './redaction.js';
import { addEntityToRun, type CheckpointableEntity, keepEarlierKickoffInRun } from './run-entities.js';
import { snapshotRun } from './run-snapshot.js';
import { SettledValues } from './settled-values.js';
import { UnchangedSnapshots } from './unchanged-snapshots.js';
import { decodeValue, toJsonSafe, type ValueCodec } from './value-codec.js';
import { CheckpointPreparation, type WriteOptions } from './write/checkpoint-preparation.js';
import { writeQueued } from './write/queued-write.js';
import { type Lineage, startingLineage } from './write/run-lineage.js';
import { writeStrictly } from './write/strict-write.js';
import { type PreparedWrite, WriteOutcomes } from './write/write-outcomes.js';
import { WriteQueue } from './write/write-queue.js';
import type { HeldLease } from './write/write-target.js';

declare module '@crewline/events' {
  interface RunStateTypes {
    state: RuntimeState;
  }
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

const lifecycle: ReadonlySet<string> = new Set(checkpointLifecycleEventTypes);

/**
 * Everything one run consists of: its entities, inputs, event history and lineage. Writes
 * checkpoints through a provider; every write names the run's previous one in the same location as
 * its parent (see LineagePositions in write/lineage-positions.ts).
 */
export class RuntimeState implements RunState {
  readonly runId: string;
  entities: CheckpointableEntity[];
  inputs: Record<string, unknown>;
  readonly events: EventRecord[];
  readonly lineage: Lineage;
  /** The trigger of the last write. */
  lastTrigger: string | undefined;
  /** What this run's entities settled: redacted once, and handed to the provider with each write. */
  readonly settled = new SettledValues();
  provider: CheckpointProvider | undefined;
  location: string;
  /** The lease on this run's lineage head, when its store fences heads (see {@link HeldLease}). */
  lease: HeldLease | undefined;
  readonly #bus: EventBus;
  /** Each entity's last redacted snapshot, given again while its content stays the same. */
  readonly #unchangedSnapshots = new UnchangedSnapshots();
  /** Takes each checkpoint for its write: where it goes, what it holds, its place in the lineage. */
  readonly #preparation: CheckpointPreparation;
  /** How each write ends (events, lastStored, pruning), and the writes and prunes in flight. */
  readonly #outcomes: WriteOutcomes;
  /** The checkpoint this state was restored from, as stored (see {@link fromDocument}). */
  #restored: CheckpointDocument | undefined;
  /** The checkpoints taken for a write in the background, written in order (see write/write-queue.ts). */
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
    this.#bus = options.bus ?? defaultBus;
    this.lineage = startingLineage(options.lineage);
    this.#preparation = new CheckpointPreparation(this, {
      providerFor: options.providerFor,
      valueCodec: options.valueCodec,
    });
    this.#outcomes = new WriteOutcomes(this, this.#bus);
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
    addEntityToRun(this.entities, entity);
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
    return keepEarlierKickoffInRun(this.entities, entity, this.settled);
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
    return snapshotRun(this, this.#unchangedSnapshots, trigger, parentId);
  }

  /** Takes a checkpoint for a write with `options`, and reports its write started. */
  #prepare(options: WriteOptions): PreparedWrite {
    return this.#outcomes.started(this.#preparation.take(options), options);
  }

  /**
   * The last checkpoint this state stored (its reference, id, lineage and branch), or `undefined`
   * before its first write. A checkpoint still queued for a background write is not stored yet.
   */
  get lastStored(): StoredCheckpoint | undefined {
    return this.#outcomes.lastStored;
  }

  /** Writes a checkpoint synchronously with explicit options; throws on failure. */
  writeCheckpointSync(options: WriteOptions = {}): StoredCheckpoint {
    return writeStrictly(this.#prepare(options), this.#writes, this.#outcomes);
  }

  /** Writes a checkpoint with explicit options; rejects on failure. */
  async writeCheckpoint(options: WriteOptions = {}): Promise<StoredCheckpoint> {
    return writeQueued(this.#prepare(options), this.#writes, this.#outcomes);
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
    if (this.#restored !== undefined) this.#preparation.forkFrom(this.#restored);
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
    return this.#outcomes.hasPendingWork;
  }

  /** Waits for writes and prunes started by this state. */
  settle(): Promise<void> {
    return this.#outcomes.settle();
  }

  /**
   * The run ended and its writes settled ({@link settle}): tells the provider of every location it
   * wrote to (`runEnded`), so that nothing made ahead for its next writes is left there (JsonProvider's
   * spare temp files). Best-effort: a failure is logged, the run's result stands.
   */
  async runEnded(): Promise<void> {
    await Promise.all(
      this.#preparation.stores().map(async ({ provider, location }) => {
        try {
          await provider.runEnded?.(location);
        } catch (error) {
          logger.warn(component, `tidying ${location} after the run (${provider.kind}) failed`, error);
        }
      }),
    );
  }
}
