import { resolve } from 'node:path';
import { logger } from '@crewline/events';
import {
  type CheckpointProvider,
  type CheckpointWrite,
  type Lease,
  type LeaseRequest,
  type LeaseToken,
  type ListQuery,
  PROVIDER_CONTRACT_VERSION,
  type ProviderCapabilities,
  type PruneOptions,
  type PruneResult,
  type RawCheckpoint,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import {
  type CheckedNames,
  checkId,
  checkLeaseDuration,
  checkLeaseRequest,
  checkLeaseToken,
  checkPruneOptions,
  checkQuery,
  storedFromRawRow,
  storedFromRow,
} from '@crewline/runtime-state/internal';
import { retryWhenBusy, retryWhenBusySync } from './busy-retry.js';
import {
  type Connection,
  databaseExists,
  isMemoryLocation,
  openConnection,
  openReadConnection,
} from './connection.js';
import { type DatabaseStats, readDatabaseStats } from './database-stats.js';
import { component, sqliteError, toCrewlineError } from './errors.js';
import { collectGarbage, type GarbageReport, recordRemoved } from './garbage-collector.js';
import { claimLeaseIn, noLeaseWithoutDatabase, noSuchHead, releaseLeaseIn, renewLeaseIn } from './leases.js';
import { parseDatabaseReference, resolveDatabaseLocation } from './location.js';
import { damagedRow, type MetadataRow } from './metadata-row.js';
import {
  parseSqliteProviderOptions,
  type ResolvedSqliteProviderOptions,
  type SqliteProviderOptions,
} from './options.js';
import { selectPruned } from './prune-selection.js';
import { readCheckpointText } from './read-checkpoint.js';
import { checkWritable, existingCheckpoint, isDuplicateCheckpoint } from './write-checkpoint.js';

/** Connections are shared by every spelling of one database path. */
function connectionKey(location: string): string {
  return isMemoryLocation(location) ? location : resolve(location);
}

/**
 * Stores checkpoints in one SQLite database file (better-sqlite3), built for checkpointing on every
 * event: each write is one `BEGIN IMMEDIATE` transaction that stores only what changed since the
 * parent checkpoint (new events, changed parts of the entities), in WAL mode, safe for several
 * processes writing the same file. Fences lineage heads (`capabilities.leases`): claims, renewals and
 * releases are `BEGIN IMMEDIATE` transactions on the `leases` table, and a write that carries a lease
 * checks it in its own transaction.
 */
export class SqliteProvider implements CheckpointProvider {
  readonly kind = 'sqlite';
  readonly contractVersion = PROVIDER_CONTRACT_VERSION;
  readonly capabilities: ProviderCapabilities = { syncWrite: true, incremental: true, leases: true };
  /** The options in force, defaults applied. */
  readonly options: ResolvedSqliteProviderOptions;
  readonly #connections = new Map<string, Connection>();
  /** The same connections by the location string callers pass (skips path resolution per write). */
  readonly #byLocation = new Map<string, Connection>();
  /** Read-only connections replaced by writable ones, closed by {@link close}. */
  #retired: Connection[] = [];
  /** The names this provider's last write checked (see `checkWritable`). */
  #checked: CheckedNames = {};

  constructor(options: SqliteProviderOptions = {}) {
    this.options = parseSqliteProviderOptions(options);
  }

  resolveLocation(location: string): string {
    return resolveDatabaseLocation(location);
  }

  parseReference(reference: string): { location: string; id?: string } | undefined {
    return parseDatabaseReference(reference);
  }

  /**
   * The connection to write with: the cached one when it is writable, else a new writable one (the
   * file and schema created as needed), which replaces a read-only connection of the same database.
   * Throws for a database that fails SQLite's quick_check (see integrity-check.ts); the read-only
   * connection opened instead is kept for reads.
   */
  #writable(location: string): Connection {
    const known = this.#byLocation.get(location);
    if (known?.writable) return known;
    const key = connectionKey(location);
    const cached = this.#connections.get(key);
    if (cached?.writable) {
      this.#byLocation.set(location, cached);
      return cached;
    }
    // A database found damaged when it was opened for writing stays refused: checking it again on
    // every write would read the whole file each time.
    if (cached?.damage !== undefined) throw cached.damage;
    const connection = openConnection(location, this.options);
    if (cached) this.#forget(cached);
    this.#connections.set(key, connection);
    this.#byLocation.set(location, connection);
    if (connection.damage !== undefined) throw connection.damage;
    return connection;
  }

  /**
   * A connection to read with: the cached one (writable or not), else the database opened
   * read-only. Undefined when there is no database, or it holds no crewline schema yet: reads never
   * create a file or a schema.
   */
  #readable(location: string): Connection | undefined {
    const known = this.#byLocation.get(location);
    if (known !== undefined) return known;
    const key = connectionKey(location);
    let connection = this.#connections.get(key);
    if (connection === undefined) {
      if (!databaseExists(location)) return undefined;
      connection = isMemoryLocation(location)
        ? openConnection(location, this.options)
        : openReadConnection(location, this.options);
      if (connection === undefined) return undefined;
      this.#connections.set(key, connection);
    }
    this.#byLocation.set(location, connection);
    return connection;
  }

  /** A writable connection for removals, only when the database already holds checkpoints to remove. */
  #existingWritable(location: string): Connection | undefined {
    return this.#readable(location) === undefined ? undefined : this.#writable(location);
  }

  /**
   * Drops every cache entry of a read-only connection that a writable one replaces. It is closed
   * with the provider, not now: a read waiting out a busy lock may still hold it.
   */
  #forget(connection: Connection): void {
    for (const [location, cached] of this.#byLocation) {
      if (cached === connection) this.#byLocation.delete(location);
    }
    this.#retired.push(connection);
  }

  #writeIn(connection: Connection, checkpoint: CheckpointWrite): StoredCheckpoint {
    try {
      const { stored, head, lastWrite, values } = connection.insert.immediate(
        checkpoint,
        this.options.maxCheckpointBytes,
      );
      connection.heads.remember(stored.id, head);
      connection.rememberValues(values);
      connection.lastWrite = lastWrite;
      connection.noteWrite();
      return stored;
    } catch (error) {
      connection.lastWrite = undefined;
      connection.forgetValues();
      if (!isDuplicateCheckpoint(error)) throw error;
      return existingCheckpoint(connection, checkpoint);
    }
  }

  writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    try {
      this.#checked = checkWritable(checkpoint, this.#checked);
      const connection = this.#writable(location);
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

  async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    try {
      this.#checked = checkWritable(checkpoint, this.#checked);
      const connection = this.#writable(location);
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
      const connection = this.#readable(location);
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
      () => {
        throw sqliteError(
          'not_found',
          `no checkpoint "${id}" in ${location}: the database does not exist or holds no checkpoints`,
        );
      },
      (connection) => readCheckpointText(connection, id, this.options.maxCheckpointBytes),
    );
    return { text };
  }

  async list(location: string, query: ListQuery = {}): Promise<StoredCheckpoint[]> {
    checkQuery(component, query);
    return this.#reading(
      location,
      () => [],
      (connection) => {
        const { list } = connection.statements;
        const rows = (
          query.branch !== undefined && query.lineageId !== undefined
            ? list.both.all(query.branch, query.lineageId)
            : query.branch !== undefined
              ? list.branch.all(query.branch)
              : query.lineageId !== undefined
                ? list.lineage.all(query.lineageId)
                : list.all.all()
        ) as unknown[][];
        const listed = new Array<StoredCheckpoint>(rows.length);
        for (let index = 0; index < rows.length; index += 1)
          listed[index] = storedFromRawRow(rows[index]!, location, damagedRow);
        return listed;
      },
    );
  }

  async latest(location: string, query: ListQuery = {}): Promise<StoredCheckpoint | undefined> {
    checkQuery(component, query);
    return this.#reading(
      location,
      () => undefined,
      (connection) => {
        const { latest } = connection.statements;
        const row = (
          query.branch !== undefined && query.lineageId !== undefined
            ? latest.both.get(query.branch, query.lineageId)
            : query.branch !== undefined
              ? latest.branch.get(query.branch)
              : query.lineageId !== undefined
                ? latest.lineage.get(query.lineageId)
                : latest.all.get()
        ) as MetadataRow | undefined;
        return row === undefined ? undefined : storedFromRow(row, location, damagedRow);
      },
    );
  }

  async prune(location: string, options: PruneOptions): Promise<PruneResult> {
    checkPruneOptions(component, options);
    const dryRun = options.dryRun ?? false;
    if (options.keep === undefined && options.olderThan === undefined) return { removed: [], dryRun };
    try {
      const connection = this.#existingWritable(location);
      if (connection === undefined) return { removed: [], dryRun };
      const { removed, collect } = await retryWhenBusy(
        () =>
          connection.db
            .transaction(() => {
              const chosen = selectPruned(connection, options);
              if (dryRun || chosen.length === 0) return { removed: chosen, collect: false };
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
      const connection = this.#existingWritable(location);
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

  /** Runs `work` in a `BEGIN IMMEDIATE` transaction, retried while the database is busy. */
  #leaseTransaction<T>(connection: Connection, work: () => T): Promise<T> {
    return retryWhenBusy(
      () => connection.db.transaction(work).immediate(),
      this.options.busyRetryMs,
      'write',
      connection.location,
    );
  }

  /**
   * Claims a lineage head (see `LeaseRequest`): granted when `checkpointId` is the lineage's newest
   * checkpoint and no other owner holds an unexpired lease. Creates the database for a claim of a
   * new lineage (`checkpointId: null`), never for a claim that cannot succeed.
   */
  async claimLease(location: string, request: LeaseRequest): Promise<Lease> {
    checkLeaseRequest(component, request);
    try {
      if (request.checkpointId !== null && this.#readable(location) === undefined) {
        throw noSuchHead(request.lineageId, request.checkpointId);
      }
      const connection = this.#writable(location);
      return await this.#leaseTransaction(connection, () => claimLeaseIn(connection, request));
    } catch (error) {
      throw toCrewlineError(error, 'write', location);
    }
  }

  /** Extends a held lease by `ttlMs` from now; `conflict` when it was taken over or released. */
  async renewLease(location: string, token: LeaseToken, ttlMs: number): Promise<Lease> {
    checkLeaseToken(component, token);
    checkLeaseDuration(component, ttlMs);
    try {
      const connection = this.#existingWritable(location);
      if (connection === undefined) throw noLeaseWithoutDatabase(location, token.lineageId);
      return await this.#leaseTransaction(connection, () => renewLeaseIn(connection, token, ttlMs));
    } catch (error) {
      throw toCrewlineError(error, 'write', location);
    }
  }

  /** Gives a lease up; nothing happens when `owner` does not hold it (or there is no database). */
  async releaseLease(location: string, token: LeaseToken): Promise<void> {
    checkLeaseToken(component, token);
    try {
      const connection = this.#existingWritable(location);
      if (connection === undefined) return;
      await this.#leaseTransaction(connection, () => releaseLeaseIn(connection, token));
    } catch (error) {
      throw toCrewlineError(error, 'write', location);
    }
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
      const connection = this.#existingWritable(location);
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
    for (const connection of [...this.#connections.values(), ...this.#retired.splice(0)]) {
      try {
        connection.close();
      } catch (error) {
        logger.warn(component, `closing ${connection.location} failed`, error);
      }
    }
    this.#connections.clear();
    this.#byLocation.clear();
  }
}
