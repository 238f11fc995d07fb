import { CrewlineError } from '@crewline/events';
import type { CheckpointDocument, CheckpointMetadata } from './document.js';

/** Version of the provider contract below. A provider states which version it implements. */
export const PROVIDER_CONTRACT_VERSION = 1;

/** What a provider can do beyond the required contract. Declared, never assumed. */
export interface ProviderCapabilities {
  /** `writeSync` is implemented (needed by `state.checkpoint()` and synchronous auto-checkpoints). */
  syncWrite: boolean;
  /** Stores only what changed since the parent checkpoint (uses `parentEventCount`). */
  incremental: boolean;
  /**
   * Fences lineage heads: implements `claimLease`, `renewLease` and `releaseLease`, and every write
   * that carries a `lease` checks it in the same transaction (see {@link LeaseRequest}).
   */
  leases: boolean;
  /**
   * Automatic checkpoints are best written in the background: the runtime hands them to `write` in
   * order (one at a time, each atomic) instead of calling `writeSync` inside the event, and waits for
   * them only where it must — before the run's next model or tool call, on a signal, at `exit` (the
   * rest written with `writeSync`) and at the end of the run. What queued up by then goes to
   * `writeBatch` as one group when the provider has it. For providers whose write is mostly a flush
   * to disk (JsonProvider's fsync'd files) or costs less in groups (SqliteProvider: one transaction
   * per group). Default `false`.
   */
  backgroundWrites?: boolean;
  /**
   * With {@link backgroundWrites}: the checkpoint of a model call's completion (`llm_call_completed`)
   * is not queued but committed inside its event, with whatever is queued before it, through
   * `writeSync` — for providers whose synchronous write is cheap (SqliteProvider: a small
   * transaction). A kill then never loses a completion the run was paid for, as with synchronous
   * writes; the checkpoints of the other events between two calls still go in groups. Default
   * `false` (JsonProvider: its synchronous write fsyncs a whole file).
   */
  commitsCompletionsAtOnce?: boolean;
}

/** A stored checkpoint as listed: its metadata, where to read it back, and what it occupies. */
export interface StoredCheckpoint extends CheckpointMetadata {
  /** A reference that reads this checkpoint back: a file path, `db-path#id`, `postgres-url#id`. */
  reference: string;
  /** Bytes of storage attributed to this checkpoint, when the provider knows. */
  sizeBytes?: number;
}

/** One checkpoint handed to a provider: validated, redacted, ready to store. */
export interface CheckpointWrite {
  readonly metadata: CheckpointMetadata;
  readonly document: CheckpointDocument;
  /** How many leading events this checkpoint shares with its parent (0 without a parent). */
  readonly parentEventCount: number;
  /** The whole document as human-readable JSON text (computed once). */
  text(): string;
  /** Event `index` as one line of JSON (cached per event for the whole run). */
  eventText(index: number): string;
  /** Everything but the events, as JSON text with `"events": []` (computed once). */
  headText(): string;
  /**
   * `text()` as UTF-8 bytes (computed once). Cheaper than encoding `text()`: each event line is
   * encoded once per run and reused by every later checkpoint.
   */
  bytes(): Buffer;
  /**
   * `bytes()` as consecutive pieces, for a provider that writes a file with one gathering write
   * (`writev`) instead of copying the pieces into one buffer first: the head, then each event line
   * as cached for the run (the same buffers in every checkpoint), then the end. Optional: a
   * `CheckpointWrite` built elsewhere may not have it; use `[bytes()]` then.
   */
  byteChunks?(): readonly Uint8Array[];
  /**
   * The lease this write is made under, when the run holds one (providers with `leases`). The
   * provider stores the checkpoint only if, in the same transaction, the lineage's lease is still
   * held by `owner` and has not expired; otherwise it stores nothing and throws `conflict`.
   */
  readonly lease?: LeaseToken;
  /**
   * The objects of `document` the run has settled: each holds what it held when the run first
   * handed it out and never changes. A provider that stores what changed may take the very same
   * object, met again in a later write of the run, as unchanged and reuse what it stored for it
   * without comparing (SQLite and Postgres do). Others ignore it.
   */
  readonly settled?: SettledParts;
  /**
   * True when this checkpoint is probably stored already: a fork's origin, written again right
   * before and right after the fork's first checkpoint (see ForkOrigin), which is still stored
   * wherever its run did not prune it. The contract does not change: a checkpoint written again is
   * accepted as the one stored, another checkpoint under a stored id is a `conflict`. The flag only
   * tells a provider that a cheap look-up of the id first is worth it, where finding the id stored
   * by failing to insert it costs more than the look-up or is reported elsewhere (PostgresProvider:
   * every duplicate key is an `ERROR` line in the server's log). Absent (the default) on every other
   * write, which is almost never stored already: a provider looks nothing up for those.
   */
  readonly mayBeStoredAlready?: true;
}

/** What a run promises about the objects of its checkpoints (see {@link CheckpointWrite.settled}). */
export interface SettledParts {
  /** True when `value` is settled: the same object always holds the same value. */
  has(value: object): boolean;
}

/** Who holds a lease: the random token of one continuation of a run. */
export interface LeaseToken {
  lineageId: string;
  owner: string;
}

/**
 * A claim on a lineage head, made before a run continues it (or starts it). Granted when, in one
 * transaction: `checkpointId` is the lineage's newest checkpoint (`null`: the lineage has none yet),
 * and no other owner holds an unexpired lease on the lineage. Otherwise `conflict`, with `details`
 * `{ lineageId, holder, expiresInMs }` when someone holds it, or `{ lineageId, headId }` when the
 * checkpoint is no longer the head (someone continued it already: fork instead).
 */
export interface LeaseRequest extends LeaseToken {
  /** The checkpoint to continue: must be the lineage's head. `null` for a lineage with no checkpoint. */
  checkpointId: string | null;
  /** Shown to whoever is refused: host, pid and what runs (never a secret). */
  holder: string;
  /** How long the lease lasts without a renewal, in milliseconds. */
  ttlMs: number;
}

/** A granted lease. */
export interface Lease extends LeaseToken {
  holder: string;
  /** When it runs out unless renewed (ISO time, by the store's clock). */
  expiresAt: string;
}

/** What a provider returns from `read`: the text, or an already parsed (not yet validated) object. */
export type RawCheckpoint = { text: string } | { document: unknown };

export interface ListQuery {
  branch?: string;
  lineageId?: string;
}

/**
 * A checkpoint that is stored but that `list` leaves out because it cannot be read (a damaged file),
 * named by what its storage says of it without reading it.
 */
export interface UnreadableCheckpoint {
  /** The id its storage names it by (a JSON file's name), not read from its damaged contents. */
  id: string;
  /** The branch its storage puts it on (a JSON file's directory). */
  branch: string;
  /** The parent its storage names (a JSON file's name), `null` for none, undefined when unknown. */
  parentId?: string | null;
  /** Where it is stored: a file path, `db-path#id`. */
  reference: string;
  /** Bytes it occupies, when the provider knows. */
  sizeBytes?: number;
  /** Why it cannot be read, in one line: the message of the error reading it gives. */
  reason: string;
}

/** A listing and what it left out: {@link CheckpointProvider.listWithUnreadable}. */
export interface ListingWithUnreadable {
  checkpoints: StoredCheckpoint[];
  /** Oldest first, like `checkpoints`. Empty with a `lineageId` query: a damaged one's run is unknown. */
  unreadable: UnreadableCheckpoint[];
}

/**
 * What a prune removes, **per run** (lineage): a checkpoint beyond its run's newest `keep` AND
 * created before `olderThan`; with one option, that option alone decides; with neither, nothing.
 * Never removed: a run's newest checkpoint (or any checkpoint its run does not continue), a fork
 * point (the parent of a checkpoint of another run) and a fork's first checkpoint (the one naming
 * its fork point, so a fork keeps its origin whatever its own retention). Every provider applies
 * exactly this rule: `planPrune` computes it from a listing. Invalid values are an
 * `invalid_argument` error.
 */
export interface PruneOptions {
  /** Keep the newest N checkpoints of each run; a whole number of at least 1. Default: no limit. */
  keep?: number;
  /** Remove checkpoints created before this time (never a run's newest). Default: no limit. */
  olderThan?: Date;
  /** Only runs on this branch. */
  branch?: string;
  /** Only this run (what `maxCheckpoints` uses: a run prunes its own checkpoints and nothing else). */
  lineageId?: string;
  /** Report what would be removed without removing it. */
  dryRun?: boolean;
}

export interface PruneResult {
  removed: StoredCheckpoint[];
  dryRun: boolean;
}

/**
 * The storage provider contract (version 1). A provider stores and fetches checkpoints; the core
 * does serialization, validation, redaction and migration. Every method takes the location the user
 * configured, after {@link CheckpointProvider.resolveLocation}. Lists are ordered oldest first.
 */
export interface CheckpointProvider {
  /** Short name: `json`, `sqlite`, `postgres`, or a third party's own. */
  readonly kind: string;
  readonly contractVersion: typeof PROVIDER_CONTRACT_VERSION;
  readonly capabilities: ProviderCapabilities;
  /** Canonical form of a location (SQLite appends `.db` when it has no suffix). */
  resolveLocation(location: string): string;
  /**
   * Splits a reference this provider understands into location and id; undefined if not its own.
   * When the provider had to read the checkpoint to parse the reference (a JSON file), it may
   * return its listing entry as `checkpoint`: resolving the reference then lists nothing.
   */
  parseReference(
    reference: string,
  ): { location: string; id?: string; checkpoint?: StoredCheckpoint } | undefined;
  /** Stores a checkpoint synchronously. Present when `capabilities.syncWrite`. */
  writeSync?(location: string, checkpoint: CheckpointWrite): StoredCheckpoint;
  write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint>;
  /**
   * Stores consecutive checkpoints of one location as a group, in order: a crash may leave a prefix
   * of them stored, never a later one without an earlier one. Rejects when any could not be stored
   * (the runtime then writes them one by one with `write`, each getting its own outcome; not after an
   * error whose `details.timedOut` is true without `details.serverAnswered`: a store that stayed silent
   * for its whole time limit would make each write wait it again, and the group fails whole). Optional;
   * the runtime uses it for automatic checkpoints that queued up behind a write in flight.
   */
  writeBatch?(location: string, checkpoints: readonly CheckpointWrite[]): Promise<StoredCheckpoint[]>;
  /** Reads a checkpoint by id; rejects with a `not_found` CrewlineError when it does not exist. */
  read(location: string, id: string): Promise<RawCheckpoint>;
  /**
   * Reads a checkpoint by id as the value its text parses to, for a provider that stores structure
   * and would otherwise lay the text out only for the core to parse it again (restores read this
   * way). Refuses, as `too_large`, a checkpoint of more than `options.maxBytes` bytes of text (also
   * when what it reads is larger than its stored size says). The core checks the document exactly as
   * it checks text. Optional; rejects as `read` does.
   */
  readParsed?(location: string, id: string, options: { maxBytes: number }): Promise<ParsedCheckpoint>;
  list(location: string, query?: ListQuery): Promise<StoredCheckpoint[]>;
  /**
   * `list`, and in the same pass the checkpoints it leaves out because they cannot be read, so that
   * a listing can show them and their ids can be named (the CLI's `list` and short ids). Optional:
   * for a provider whose listing can skip a stored checkpoint (JsonProvider skips a damaged file; a
   * database lists every row, a damaged one included).
   */
  listWithUnreadable?(location: string, query?: ListQuery): Promise<ListingWithUnreadable>;
  latest(location: string, query?: ListQuery): Promise<StoredCheckpoint | undefined>;
  /** Removes what {@link PruneOptions} selects (see `planPrune`), oldest first in the result. */
  prune(location: string, options: PruneOptions): Promise<PruneResult>;
  /** Deletes one checkpoint; false when it did not exist. */
  delete(location: string, id: string): Promise<boolean>;
  /**
   * Claims a lineage head (see {@link LeaseRequest}). Present when `capabilities.leases`; a provider
   * that can only keep out other processes of one machine (JsonProvider's lock files) may offer the
   * three lease methods while declaring `leases: false`. The runtime claims whenever they exist.
   */
  claimLease?(location: string, request: LeaseRequest): Promise<Lease>;
  /**
   * Extends a held lease by `ttlMs` from now. `conflict` when the lease was lost (expired and taken
   * over, or released): the holder must stop writing.
   */
  renewLease?(location: string, token: LeaseToken, ttlMs: number): Promise<Lease>;
  /** Gives a lease up (the run ended or paused); nothing happens when `owner` no longer holds it. */
  releaseLease?(location: string, token: LeaseToken): Promise<void>;
  /**
   * Called once a run that wrote to `location` has ended (returned, failed or paused) and every one
   * of its writes settled — not when a signal ends the process (`close` then). A provider lets go of
   * what it kept ready for the run's next writes; resolved, nothing of the run is left being created
   * at `location`, which its user may remove at once (JsonProvider removes the spare temp files it
   * made ahead). It must not stop the provider working: another run may write there next. Optional.
   */
  runEnded?(location: string): Promise<void>;
  /** Releases connections and handles. */
  close?(): void | Promise<void>;
  /**
   * Resolves when `location` exists (empty or holding checkpoints), else rejects with a `not_found`
   * error naming what is missing and how to fix it. For readers that must not take a misspelt
   * location for an empty one (the CLI's `list`), where `list` itself lists nothing, as for any
   * location nothing was written to yet. Optional: a provider whose locations are paths leaves the
   * check to its caller (the CLI checks the path itself).
   */
  checkLocationExists?(location: string): Promise<void>;
}

/** What a provider's `readParsed` gives: the document its text parses to, the events possibly still as text. */
export interface ParsedCheckpoint {
  /** The document as its text parses; without `events` when `eventLines` is given. */
  document: unknown;
  /**
   * The document's events as the text holds them, one JSON object a line, unparsed: the core parses
   * and checks them the first time something reads the document's `events` (a restore reads none
   * until the run continues). Optional: a provider may give the parsed `events` in `document` instead.
   */
  eventLines?: readonly string[];
}

/** True when `value` has the shape of a provider (used to validate user options). */
export function isCheckpointProvider(value: unknown): value is CheckpointProvider {
  if (value === null || typeof value !== 'object') return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.kind === 'string' &&
    typeof candidate.write === 'function' &&
    typeof candidate.read === 'function' &&
    typeof candidate.list === 'function' &&
    typeof candidate.latest === 'function' &&
    typeof candidate.prune === 'function' &&
    typeof candidate.delete === 'function' &&
    typeof candidate.resolveLocation === 'function' &&
    typeof candidate.parseReference === 'function'
  );
}

/**
 * Throws a typed error when a provider implements a newer contract than this core understands, so
 * a mismatched install fails at configuration time with a fix, not deep inside a write.
 */
export function assertSupportedProvider(provider: CheckpointProvider): void {
  const version = (provider as { contractVersion?: unknown }).contractVersion;
  if (typeof version === 'number' && version > PROVIDER_CONTRACT_VERSION) {
    throw new CrewlineError(
      'runtime-state',
      'unsupported_version',
      `provider "${provider.kind}" implements provider contract ${version}, newer than this @crewline/runtime-state understands (${PROVIDER_CONTRACT_VERSION}); upgrade @crewline/runtime-state`,
    );
  }
}
