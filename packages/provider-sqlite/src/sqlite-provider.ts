import { logger } from '@crewline/events';
import {
  type CheckpointProvider,
  type CheckpointWrite,
  type Lease,
  type LeaseRequest,
  type LeaseToken,
  type ListQuery,
  type ParsedCheckpoint,
  PROVIDER_CONTRACT_VERSION,
  type ProviderCapabilities,
  type PruneOptions,
  type PruneResult,
  type RawCheckpoint,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { type CheckedNames, checkId, checkPruneOptions, checkQuery } from '@crewline/runtime-state/internal';
import { retryWhenBusy, retryWhenBusySync } from './database/busy-retry.js';
import type { Connection } from './database/connection.js';
import { ConnectionPool } from './database/connection-pool.js';
import { parseDatabaseReference, resolveDatabaseLocation } from './database/location.js';
import { component, sqliteError, toCrewlineError } from './errors.js';
import { claimLeaseAt, releaseLeaseAt, renewLeaseAt } from './leases/lease-operations.js';
import { type DatabaseStats, readDatabaseStats } from './maintenance/database-stats.js';
import {
  collectGarbage,
  type GarbageReport,
  garbageDue,
  recordRemoved,
} from './maintenance/garbage-collector.js';
import {
  parseSqliteProviderOptions,
  type ResolvedSqliteProviderOptions,
  type SqliteProviderOptions,
} from './options.js';
import { latestCheckpoint, listCheckpoints } from './read/list-checkpoints.js';
import { selectPruned } from './read/prune-selection.js';
import { readCheckpointDocument, readCheckpointText } from './read/read-checkpoint.js';
import {
  checkWritable,
  existingCheckpoint,
  type InsertResult,
  insertCheckpointImmediately,
  insertGroupImmediately,
  isDuplicateCheckpoint,
} from './write/write-checkpoint.js';

/** A read of `id` where the database does not exist or holds no checkpoints. */
function noCheckpointIn(location: string, id: string): never {
  throw sqliteError(
    'not_found',
    `no checkpoint "${id}" in ${location}: the database does not exist or holds no checkpoints`,
  );
}

/**
 * Stores checkpoints in one SQLite database file (better-sqlite3), built for checkpointing on every
 * event: a write stores only what changed since the parent checkpoint (new events, changed parts of
 * the entities) in a `BEGIN IMMEDIATE` transaction, in WAL mode, safe for several processes writing
 * the same file. A run's automatic checkpoints are committed inside their events; with `groupCommit`,
 * in groups, one transaction for those of the events between two model or tool calls
 * ({@link SqliteProvider.writeBatch}).
 * Fences lineage heads (`capabilities.leases`): claims, renewals and releases are `BEGIN IMMEDIATE`
 * transactions on the `leases` table, and a write that carries a lease checks it in its own
 * transaction.
 */
export class SqliteProvider implements CheckpointProvider {
  readonly kind = 'sqlite';
  readonly contractVersion = PROVIDER_CONTRACT_VERSION;
  readonly capabilities: ProviderCapabilities;
  /** The options in force, defaults applied. */
  readonly options: ResolvedSqliteProviderOptions;
  readonly #connections: ConnectionPool;
  /** The names this provider's last write checked (see `checkWritable`). */
  #checked: CheckedNames = {};

  constructor(options: SqliteProviderOptions = {}) {
    this.options = parseSqliteProviderOptions(options);
    this.#connections = new ConnectionPool(this.options);
    this.capabilities = {
      syncWrite: true,
      incremental: true,
      leases: true,
      // With `groupCommit`, automatic checkpoints are queued and committed in groups (writeBatch),
      // but a model completion's at once, inside its event.
      backgroundWrites: this.options.groupCommit,
      commitsCompletionsAtOnce: this.options.groupCommit,
    };
  }

  resolveLocation(location: string): string {
    return resolveDatabaseLocation(location);
  }

  parseReference(reference: string): { location: string; id?: string } | undefined {
    return parseDatabaseReference(reference);
  }

  #writeIn(connection: Connection, checkpoint: CheckpointWrite): StoredCheckpoint {
    try {
      const result = insertCheckpointImmediately(connection, checkpoint, this.options.maxCheckpointBytes);
      this.#remember(connection, result);
      connection.noteWrite();
      return result.stored;
    } catch (error) {
      this.#forgetLastWrite(connection);
      if (!isDuplicateCheckpoint(error)) throw error;
      return existingCheckpoint(connection, checkpoint);
    }
  }

  /** What the next write of the run reuses from this one (see `Connection.lastWrite`). */
  #remember(connection: Connection, { stored, head, lastWrite, values, eventStrings }: InsertResult): void {
    connection.heads.remember(stored.id, head);
    connection.rememberValues(values);
    connection.eventStrings.remember(eventStrings);
    connection.lastWrite = lastWrite;
  }

  #forgetLastWrite(connection: Connection): void {
    connection.lastWrite = undefined;
    connection.forgetValues();
    connection.eventStrings.forget();
  }

  writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    try {
      this.#checked = checkWritable(checkpoint, this.#checked);
      const connection = this.#connections.writable(location);
      return retryWhenBusySync(
        () => this.#writeIn(connection, checkpoint),
        this.options.busyRetryMs,
        'write',
        location,
      );
    } catch (error) {
      throw toCrewlineError(error, 'write', location);
    }
  }

  /**
   * Stores consecutive checkpoints of one run in one `BEGIN IMMEDIATE` transaction, in order: all of
   * them or none (the runtime then writes them one by one, each with its own outcome). Each keeps its
   * own row and parent, and continues the one before it as a single write would.
   */
  async writeBatch(location: string, checkpoints: readonly CheckpointWrite[]): Promise<StoredCheckpoint[]> {
    try {
      for (const checkpoint of checkpoints) this.#checked = checkWritable(checkpoint, this.#checked);
      const connection = this.#connections.writable(location);
      return retryWhenBusySync(
        () => this.#writeGroupIn(connection, checkpoints),
        this.options.busyRetryMs,
        'write',
        location,
      );
    } catch (error) {
      this.#checked = {};
      throw toCrewlineError(error, 'write', location);
    }
  }

  #writeGroupIn(connection: Connection, checkpoints: readonly CheckpointWrite[]): StoredCheckpoint[] {
    // Heads remembered for checkpoints of this group: forgotten again if the group rolls back, since
    // their chunks are then gone and a later write must not name them.
    const remembered: string[] = [];
    try {
      const stored = insertGroupImmediately(
        connection,
        checkpoints,
        this.options.maxCheckpointBytes,
        (result) => {
          // Inside the transaction: the next checkpoint of the group continues this one.
          remembered.push(result.stored.id);
          this.#remember(connection, result);
        },
      );
      for (const _ of stored) connection.noteWrite();
      return stored;
    } catch (error) {
      for (const id of remembered) connection.heads.forget(id);
      this.#forgetLastWrite(connection);
      throw error;
    }
  }

  async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    try {
      this.#checked = checkWritable(checkpoint, this.#checked);
      const connection = this.#connections.writable(location);
      // The first attempt runs before any await, so writes started in order are stored in order.
      return await retryWhenBusy(
        () => this.#writeIn(connection, checkpoint),
        this.options.busyRetryMs,
        'write',
        location,
      );
    } catch (error) {
      throw toCrewlineError(error, 'write', location);
    }
  }

  async #reading<T>(location: string, empty: () => T, work: (connection: Connection) => T): Promise<T> {
    try {
      const connection = this.#connections.readable(location);
      if (connection === undefined) return empty();
      const transaction = connection.db.transaction(() => work(connection));
      return await retryWhenBusy(() => transaction.deferred(), this.options.busyRetryMs, 'read', location);
    } catch (error) {
      throw toCrewlineError(error, 'read', location);
    }
  }

  async read(location: string, id: string): Promise<RawCheckpoint> {
    checkId(component, id);
    const text = await this.#reading(
      location,
      () => noCheckpointIn(location, id),
      (connection) => readCheckpointText(connection, id, this.options.maxCheckpointBytes),
    );
    return { text };
  }

  async readParsed(location: string, id: string, options: { maxBytes: number }): Promise<ParsedCheckpoint> {
    checkId(component, id);
    return this.#reading(
      location,
      () => noCheckpointIn(location, id),
      (connection) =>
        readCheckpointDocument(connection, id, Math.min(this.options.maxCheckpointBytes, options.maxBytes)),
    );
  }

  async list(location: string, query: ListQuery = {}): Promise<StoredCheckpoint[]> {
    checkQuery(component, query);
    return this.#reading(
      location,
      () => [],
      (connection) => listCheckpoints(connection, location, query),
    );
  }

  async latest(location: string, query: ListQuery = {}): Promise<StoredCheckpoint | undefined> {
    checkQuery(component, query);
    return this.#reading(
      location,
      () => undefined,
      (connection) => latestCheckpoint(connection, location, query),
    );
  }

  async prune(location: string, options: PruneOptions): Promise<PruneResult> {
    checkPruneOptions(component, options);
    const dryRun = options.dryRun ?? false;
    if (options.keep === undefined && options.olderThan === undefined) return { removed: [], dryRun };
    try {
      const connection = this.#connections.existingWritable(location);
      if (connection === undefined) return { removed: [], dryRun };
      const { removed, collect } = await retryWhenBusy(
        () =>
          connection.db
            .transaction(() => {
              const chosen = selectPruned(connection, options);
              if (dryRun) return { removed: chosen, collect: false };
              // A prune killed after its commit, before its collection, left its garbage pending; the
              // next one usually has nothing to remove (the same retention), and collects it once due.
              if (chosen.length === 0) return { removed: chosen, collect: garbageDue(connection) };
              connection.lastWrite = undefined;
              for (const stored of chosen) connection.statements.deleteCheckpoint.run(stored.id);
              return { removed: chosen, collect: recordRemoved(connection, chosen.length) };
            })
            .immediate(),
        this.options.busyRetryMs,
        'write',
        location,
      );
      if (collect) this.#collectQuietly(connection);
      return { removed, dryRun };
    } catch (error) {
      throw toCrewlineError(error, 'write', location);
    }
  }

  async delete(location: string, id: string): Promise<boolean> {
    checkId(component, id);
    try {
      const connection = this.#connections.existingWritable(location);
      if (connection === undefined) return false;
      const { deleted, collect } = await retryWhenBusy(
        () =>
          connection.db
            .transaction(() => {
              connection.lastWrite = undefined;
              const deleted = connection.statements.deleteCheckpoint.run(id).changes > 0;
              return { deleted, collect: deleted && recordRemoved(connection, 1) };
            })
            .immediate(),
        this.options.busyRetryMs,
        'write',
        location,
      );
      if (collect) this.#collectQuietly(connection);
      return deleted;
    } catch (error) {
      throw toCrewlineError(error, 'write', location);
    }
  }

  /**
   * Claims a lineage head (see `LeaseRequest`): granted when `checkpointId` is the lineage's newest
   * checkpoint and no other owner holds an unexpired lease, or its holder's process is provably gone
   * (see leases/holder-process.ts). Creates the database for a claim of a new lineage
   * (`checkpointId: null`), never for a claim that cannot succeed.
   */
  async claimLease(location: string, request: LeaseRequest): Promise<Lease> {
    return claimLeaseAt(this.#connections, this.options.busyRetryMs, location, request);
  }

  /** Extends a held lease by `ttlMs` from now; `conflict` when it was taken over or released. */
  async renewLease(location: string, token: LeaseToken, ttlMs: number): Promise<Lease> {
    return renewLeaseAt(this.#connections, this.options.busyRetryMs, location, token, ttlMs);
  }

  /** Gives a lease up; nothing happens when `owner` does not hold it (or there is no database). */
  async releaseLease(location: string, token: LeaseToken): Promise<void> {
    return releaseLeaseAt(this.#connections, this.options.busyRetryMs, location, token);
  }

  /** Garbage collection after a removal is housekeeping: its failure must not fail the removal. */
  #collectQuietly(connection: Connection): void {
    try {
      retryWhenBusySync(
        () => collectGarbage(connection),
        this.options.busyRetryMs,
        'write',
        connection.location,
      );
    } catch (error) {
      logger.warn(
        component,
        `garbage collection of ${connection.location} failed; it will be retried later`,
        error,
      );
    }
  }

  /**
   * Removes now every event and chunk that no remaining checkpoint needs (prune and delete do this
   * on their own once enough has been removed). Returns what was removed.
   */
  async collectGarbage(location: string): Promise<GarbageReport> {
    try {
      const connection = this.#connections.existingWritable(location);
      if (connection === undefined) return { streams: 0, events: 0, chunks: 0 };
      return await retryWhenBusy(
        () => collectGarbage(connection),
        this.options.busyRetryMs,
        'write',
        location,
      );
    } catch (error) {
      throw toCrewlineError(error, 'write', location);
    }
  }

  /** Sizes and counts of a database, for tests, benchmarks and `crewline checkpoint info`. */
  async stats(location: string): Promise<DatabaseStats | undefined> {
    return this.#reading(location, () => undefined, readDatabaseStats);
  }

  /** Closes every database this provider opened. The provider can be used again afterwards. */
  close(): void {
    this.#connections.close();
  }
}
