import type { EventRecord } from '@crewline/events';
import { createCheckpointWrite } from '../checkpoint-write.js';
import type { CheckpointDocument, CheckpointMetadata, EntitySnapshot } from '../document.js';
import type { CheckpointProvider, CheckpointWrite } from '../provider.js';
import type { SettledValues } from '../settled-values.js';
import type { ValueCodec } from '../value-codec.js';
import { ForkOrigin } from './fork-origin.js';
import { LineagePositions } from './lineage-positions.js';
import { advanceLineage, type Lineage } from './run-lineage.js';
import { SettledTextCache } from './settled-text.js';
import { StoredInputs } from './stored-inputs.js';
import { type HeldLease, leaseTokenFor, type WriteTarget, WriteTargets } from './write-target.js';

export interface WriteOptions {
  provider?: CheckpointProvider;
  location?: string;
  /** What caused the write: an event type, or `manual` (the default). */
  trigger?: string;
  /** Prune this run (its lineage) to this many checkpoints after the write (best-effort). */
  maxCheckpoints?: number;
}

/** What a checkpoint of a run is taken from (RuntimeState, seen from here). */
export interface PreparingRun {
  readonly inputs: Record<string, unknown>;
  readonly events: EventRecord[];
  readonly lineage: Lineage;
  readonly settled: SettledValues;
  readonly provider: CheckpointProvider | undefined;
  readonly location: string;
  readonly lease: HeldLease | undefined;
  /** Set to the trigger of each write taken. */
  lastTrigger: string | undefined;
  snapshot(
    trigger: string,
    parentId: string | null,
  ): { metadata: CheckpointMetadata; entities: EntitySnapshot[] };
}

/** A checkpoint taken for a write: the run's lineage names it already. */
export interface TakenCheckpoint extends WriteTarget {
  trigger: string;
  metadata: CheckpointMetadata;
  write: CheckpointWrite;
  /** A fork's origin, written again right before `write` and once more right after it (see ForkOrigin). */
  companion: CheckpointWrite | undefined;
  /** Takes the lineage back to where it stood before this checkpoint, when its write fails. */
  undoLineage: () => void;
}

/**
 * The step before every write of a run: picks the store, takes the checkpoint (inputs, entities,
 * the events so far) and makes it the run's last one in its lineage and in that store's chain (see
 * {@link LineagePositions}). Holds what the run's checkpoints share from one write to the next: the
 * text of its events and settled parts, its stored inputs, the position of its chain in each store.
 */
export class CheckpointPreparation {
  readonly #run: PreparingRun;
  readonly #targets: WriteTargets;
  readonly #valueCodec: ValueCodec | undefined;
  readonly #eventTexts: (string | undefined)[] = [];
  readonly #eventBytes: (Buffer | undefined)[] = [];
  readonly #settledTexts = new SettledTextCache();
  /** The inputs as the last checkpoint stored them, given again while they stay the same. */
  readonly #storedInputs = new StoredInputs();
  /** Where the run's chain stands in each location it writes to: the parent of its next write there. */
  readonly #positions: LineagePositions;
  /** After {@link forkFrom}: the restored checkpoint, stored again beside the fork's first write in each location. */
  #forkOrigin: ForkOrigin | undefined;
  /** The write of {@link #forkOrigin} handed to providers, flagged as maybe stored already. */
  #companion: CheckpointWrite | undefined;

  constructor(
    run: PreparingRun,
    options: {
      /** See `RuntimeStateOptions.providerFor`. */
      providerFor: ((location: string) => CheckpointProvider | undefined) | undefined;
      /** See `RuntimeStateOptions.valueCodec`. */
      valueCodec: ValueCodec | undefined;
    },
  ) {
    this.#run = run;
    this.#targets = new WriteTargets(options.providerFor);
    this.#valueCodec = options.valueCodec;
    // The run's origin, as it starts: the checkpoint it was restored from (and its events), if any.
    this.#positions = new LineagePositions({
      checkpointId: run.lineage.checkpointId,
      eventCount: run.events.length,
    });
  }

  /** Takes a checkpoint of the run now for a write with `options`; throws when the run has no provider. */
  take(options: WriteOptions): TakenCheckpoint {
    const run = this.#run;
    const { provider, resolvedLocation } = this.#targets.target(options, run);
    const trigger = options.trigger ?? 'manual';
    const position = this.#positions.at(provider, resolvedLocation);
    // Before the entities: a credential set in the inputs since the last checkpoint is registered
    // here (see StoredInputs), and the entities' snapshots of this very checkpoint must not hold it.
    const inputs = this.#storedInputs.stored(run.inputs, this.#valueCodec, run.settled);
    const { metadata, entities } = run.snapshot(trigger, position.checkpointId);
    // A fork's first checkpoint in this location: its origin goes with it (see ForkOrigin).
    const companion =
      this.#forkOrigin !== undefined && position.checkpointId === this.#forkOrigin.id
        ? this.#companion
        : undefined;
    const write = createCheckpointWrite({
      metadata,
      inputs,
      entities,
      events: run.events.slice(),
      parentEventCount: position.eventCount,
      eventTexts: this.#eventTexts,
      eventBytes: this.#eventBytes,
      settled: run.settled,
      settledTexts: this.#settledTexts,
      lease: leaseTokenFor(run.lease, provider, resolvedLocation),
    });
    const undoLineage = advanceLineage(run.lineage, this.#positions, provider, resolvedLocation, metadata);
    run.lastTrigger = trigger;
    return { provider, resolvedLocation, trigger, metadata, write, companion, undoLineage };
  }

  /**
   * The run forks from `restored`, the checkpoint it was restored from as stored: from now on, that
   * checkpoint goes with the fork's first write to each location (see ForkOrigin). A second fork
   * keeps the first one's origin.
   */
  forkFrom(restored: CheckpointDocument): void {
    if (this.#forkOrigin !== undefined) return;
    this.#forkOrigin = new ForkOrigin(restored);
    // Usually still stored where the fork writes: said so, a provider may look its id up first
    // instead of meeting it on a unique key (see CheckpointWrite.mayBeStoredAlready). Only this write
    // carries it: the fork's own checkpoints are new, and a look-up would cost each of them.
    this.#companion = { ...this.#forkOrigin.write, mayBeStoredAlready: true };
  }

  /** The stores written to, each once (see {@link LineagePositions.stores}). */
  stores(): { provider: CheckpointProvider; location: string }[] {
    return this.#positions.stores();
  }
}
