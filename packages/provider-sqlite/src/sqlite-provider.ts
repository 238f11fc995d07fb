import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { logger } from '@crewline/events';
import {
  type CheckpointProvider,
  type CheckpointWrite,
  isValidBranchName,
  isValidCheckpointId,
  type ListQuery,
  PROVIDER_CONTRACT_VERSION,
  type ProviderCapabilities,
  type PruneOptions,
  type PruneResult,
  type RawCheckpoint,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { retryWhenBusy, retryWhenBusySync } from './busy-retry.js';
import { type Connection, databaseExists, isMemoryLocation, openConnection } from './connection.js';
import { component, sqliteError, toCrewlineError } from './errors.js';
import { collectGarbage, type GarbageReport, recordRemoved } from './garbage-collector.js';
import { parseDatabaseReference, resolveDatabaseLocation } from './location.js';
import { type MetadataRow, metadataColumns, storedFromRawRow, storedFromRow } from './metadata-row.js';
import {
  parseSqliteProviderOptions,
  type ResolvedSqliteProviderOptions,
  type SqliteProviderOptions,
} from './options.js';
import { readCheckpointText } from './read-checkpoint.js';
import { checkWritable, DuplicateCheckpointError, existingCheckpoint } from './write-checkpoint.js';

/** What {@link SqliteProvider.stats} reports about one database. */
export interface DatabaseStats {
  schemaVersion: number;
  journalMode: string;
  /** The `synchronous` setting of the provider's connection: `'normal'` or `'full'`. */
  synchronous: string;
  pageSize: number;
  pageCount: number;
  freePages: number;
  /** `pageCount * pageSize`: the size of the main database file once the WAL is checkpointed. */
  databaseBytes: number;
  /** Current size of the `-wal` file. */
  walBytes: number;
  checkpoints: number;
  streams: number;
  events: number;
  chunks: number;
}

const synchronousNames = ['off', 'normal', 'full', 'extra'];

function checkQuery(query: ListQuery | undefined): void {
  if (query?.branch !== undefined && (typeof query.branch !== 'string' || !isValidBranchName(query.branch))) {
    throw sqliteError('invalid_name', `branch name ${JSON.stringify(query.branch)} is not allowed`);
  }
  if (query?.lineageId !== undefined && typeof query.lineageId !== 'string') {
    throw sqliteError('invalid_argument', 'lineageId must be a string');
  }
}

function checkId(id: string): void {
  if (typeof id !== 'string' || !isValidCheckpointId(id)) {
    throw sqliteError('invalid_name', `checkpoint id ${JSON.stringify(id)} is not a checkpoint id`);
  }
}

function checkPruneOptions(options: PruneOptions): void {
  if (options.keep !== undefined && (!Number.isInteger(options.keep) || options.keep < 1)) {
    throw sqliteError(
      'invalid_argument',
      `prune keep must be a whole number of at least 1 (each branch keeps its latest checkpoint), not ${String(options.keep)}`,
    );
  }
  if (
    options.olderThan !== undefined &&
    (!(options.olderThan instanceof Date) || Number.isNaN(options.olderThan.getTime()))
  ) {
    throw sqliteError('invalid_argument', 'prune olderThan must be a valid Date');
  }
  if (options.branch !== undefined) checkQuery({ branch: options.branch });
}

/**
 * Stores checkpoints in one SQLite database file (better-sqlite3), built for checkpointing on every
 * event: each write is one `BEGIN IMMEDIATE` transaction that stores only what changed since the
 * parent checkpoint (new events, changed parts of the entities), in WAL mode, safe for several
 * processes writing the same file.
 */
export class SqliteProvider implements CheckpointProvider {
  readonly kind = 'sqlite';
  readonly contractVersion = PROVIDER_CONTRACT_VERSION;
  readonly capabilities: ProviderCapabilities = { syncWrite: true, incremental: true, leases: false };
  /** The options in force, defaults applied. */
  readonly options: ResolvedSqliteProviderOptions;
  readonly #connections = new Map<string, Connection>();
  /** The same connections by the location string callers pass (skips path resolution per write). */
  readonly #byLocation = new Map<string, Connection>();

  constructor(options: SqliteProviderOptions = {}) {
    this.options = parseSqliteProviderOptions(options);
  }

  resolveLocation(location: string): string {
    return resolveDatabaseLocation(location);
  }

  parseReference(reference: string): { location: string; id?: string } | undefined {
    return parseDatabaseReference(reference);
  }

  /** The cached connection for a location; opened (and the file created) when `create`. */
  #connection(location: string, create: boolean): Connection | undefined {
    const known = this.#byLocation.get(location);
    if (known !== undefined) return known;
    const key = isMemoryLocation(location) ? location : resolve(location);
    let connection = this.#connections.get(key);
    if (connection === undefined) {
      if (!create && !databaseExists(location)) return undefined;
      connection = openConnection(location, this.options);
      this.#connections.set(key, connection);
    }
    this.#byLocation.set(location, connection);
    return connection;
  }

  #writeIn(connection: Connection, checkpoint: CheckpointWrite): StoredCheckpoint {
    try {
      const { stored, head, lastWrite } = connection.insert.immediate(
        checkpoint,
        this.options.maxCheckpointBytes,
      );
      connection.rememberHead(stored.id, head);
      connection.lastWrite = lastWrite;
      connection.noteWrite();
      return stored;
    } catch (error) {
      connection.lastWrite = undefined;
      if (!(error instanceof DuplicateCheckpointError)) throw error;
      return existingCheckpoint(connection, checkpoint);
    }
  }

  writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    try {
      checkWritable(checkpoint);
      const connection = this.#connection(location, true)!;
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
      checkWritable(checkpoint);
      const connection = this.#connection(location, true)!;
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
      const connection = this.#connection(location, false);
      if (connection === undefined) return empty();
      const transaction = connection.db.transaction(() => work(connection));
      return await retryWhenBusy(() => transaction.deferred(), this.options.busyRetryMs, 'read', location);
    } catch (error) {
      throw toCrewlineError(error, 'read', location);
    }
  }

  async read(location: string, id: string): Promise<RawCheckpoint> {
    checkId(id);
    const text = await this.#reading(
      location,
      () => {
        throw sqliteError('not_found', `no checkpoint "${id}" in ${location}: the database does not exist`);
      },
      (connection) => readCheckpointText(connection, id, this.options.maxCheckpointBytes),
    );
    return { text };
  }

  async list(location: string, query: ListQuery = {}): Promise<StoredCheckpoint[]> {
    checkQuery(query);
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
          listed[index] = storedFromRawRow(rows[index]!, location);
        return listed;
      },
    );
  }

  async latest(location: string, query: ListQuery = {}): Promise<StoredCheckpoint | undefined> {
    checkQuery(query);
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
        return row === undefined ? undefined : storedFromRow(row, location);
      },
    );
  }

  async prune(location: string, options: PruneOptions): Promise<PruneResult> {
    checkPruneOptions(options);
    const dryRun = options.dryRun ?? false;
    if (options.keep === undefined && options.olderThan === undefined) return { removed: [], dryRun };
    try {
      const connection = this.#connection(location, false);
      if (connection === undefined) return { removed: [], dryRun };
      const { removed, collect } = await retryWhenBusy(
        () =>
          connection.db
            .transaction(() => {
              const chosen = this.#selectPruned(connection, options);
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

  #selectPruned(connection: Connection, options: PruneOptions): StoredCheckpoint[] {
    const { db, location } = connection;
    const rows = (
      options.branch === undefined
        ? db.prepare(`SELECT ${metadataColumns} FROM checkpoints ORDER BY branch, id`).all()
        : db
            .prepare(`SELECT ${metadataColumns} FROM checkpoints WHERE branch = ? ORDER BY id`)
            .all(options.branch)
    ) as MetadataRow[];
    // Beyond the newest `keep` AND older than `olderThan` (one option alone decides by itself);
    // `olderThan` alone still leaves each branch its newest checkpoint.
    const keep = options.keep ?? 1;
    const cutoff = options.olderThan?.getTime();
    const chosen: MetadataRow[] = [];
    let start = 0;
    while (start < rows.length) {
      let end = start;
      while (end < rows.length && rows[end]!.branch === rows[start]!.branch) end += 1;
      const excess = Math.max(0, end - start - keep);
      for (let index = start; index < excess + start; index += 1) {
        const row = rows[index]!;
        if (cutoff === undefined || Date.parse(row.created_at) < cutoff) chosen.push(row);
      }
      start = end;
    }
    chosen.sort((left, right) => (left.id < right.id ? -1 : left.id > right.id ? 1 : 0));
    return chosen.map((row) => storedFromRow(row, location));
  }

  async delete(location: string, id: string): Promise<boolean> {
    checkId(id);
    try {
      const connection = this.#connection(location, false);
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
      const connection = this.#connection(location, false);
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
    return this.#reading(
      location,
      () => undefined,
      (connection) => {
        const { db } = connection;
        const pragma = (name: string) => db.pragma(name, { simple: true });
        const count = (table: string) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
        const pageSize = pragma('page_size') as number;
        const pageCount = pragma('page_count') as number;
        let walBytes = 0;
        if (!isMemoryLocation(location)) {
          try {
            walBytes = statSync(`${location}-wal`).size;
          } catch {
            walBytes = 0;
          }
        }
        return {
          schemaVersion: pragma('user_version') as number,
          journalMode: String(pragma('journal_mode')),
          synchronous: synchronousNames[pragma('synchronous') as number] ?? 'unknown',
          pageSize,
          pageCount,
          freePages: pragma('freelist_count') as number,
          databaseBytes: pageSize * pageCount,
          walBytes,
          checkpoints: count('checkpoints'),
          streams: count('streams'),
          events: count('events'),
          chunks: count('chunks'),
        };
      },
    );
  }

  /** Closes every database this provider opened. The provider can be used again afterwards. */
  close(): void {
    for (const connection of this.#connections.values()) {
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
