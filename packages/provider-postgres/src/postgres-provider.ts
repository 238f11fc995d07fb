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
  checkId,
  checkLeaseDuration,
  checkLeaseRequest,
  checkLeaseToken,
  checkPruneOptions,
  leaseLost,
} from '@crewline/runtime-state/internal';
import type pg from 'pg';
import { readDatabaseStats } from './database-stats.js';
import { component, postgresError, toCrewlineError } from './errors.js';
import { collectGarbage, garbageDue } from './garbage-collector.js';
import { retriedGroup } from './landed-writes.js';
import { claimLease, releaseLease, renewLease } from './leases.js';
import { checkListQuery, listCheckpoints, type PostgresListQuery } from './list-checkpoints.js';
import { parseReference } from './location.js';
import { missingSchemaError, schemaExists } from './missing-schema.js';
import {
  type PostgresProviderOptions,
  parsePostgresProviderOptions,
  type ResolvedPostgresProviderOptions,
} from './options.js';
import { selectPruned } from './prune-selection.js';
import { readCheckpointText } from './read-checkpoint.js';
import { deleteCheckpoint, pruneCheckpoints } from './removal.js';
import type { DatabaseStats, GarbageReport } from './reports.js';
import { SchemaConnections } from './schema-connections.js';
import type { SchemaHandle } from './schema-handle.js';
import { checkWritable, writeCheckpoint } from './write-checkpoint.js';
import { writeGroup } from './write-group.js';

/**
 * Stores checkpoints in a Postgres schema through a `pg.Pool`, for many processes and machines: each
 * write is one call of a server-side function (one round trip, one transaction) that stores only
 * what changed since the parent checkpoint (new events, changed parts of the entities), and checks
 * the run's lease on its lineage head when the write carries one (`capabilities.leases`). A run's
 * automatic checkpoints are committed in groups, one transaction for those of the events between two
 * model or tool calls ({@link PostgresProvider.writeBatch}).
 */
export class PostgresProvider implements CheckpointProvider {
  readonly kind = 'postgres';
  readonly contractVersion = PROVIDER_CONTRACT_VERSION;
  readonly capabilities: ProviderCapabilities = { syncWrite: false, incremental: true, leases: true };
  /** The options in force, defaults applied. */
  readonly options: ResolvedPostgresProviderOptions;
  readonly #connections: SchemaConnections;

  constructor(options: PostgresProviderOptions = {}) {
    this.options = parsePostgresProviderOptions(options);
    this.#connections = new SchemaConnections(this.options);
  }

  /**
   * Canonical form of a location: the connection string without password (it is kept in memory for
   * connecting, never written), with `?schema=` naming the schema.
   */
  resolveLocation(location: string): string {
    return this.#connections.parse(location).location;
  }

  parseReference(reference: string): { location: string; id?: string } | undefined {
    return parseReference(reference, this.options.schema);
  }

  async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    const handle = this.#connections.handle(location);
    try {
      checkWritable(checkpoint);
      await this.#connections.ensureWritable(handle);
      const write = (client: pg.PoolClient) =>
        writeCheckpoint(client, handle, checkpoint, this.options.maxCheckpointBytes);
      return await handle.inOrder(checkpoint.metadata.lineageId, () =>
        this.#connections.onceMoreIfLost(
          handle,
          () => this.#connections.withClient(handle, write),
          // The first attempt may have committed before its answer was lost, or still be running on
          // the server: sent again, a stored id is accepted as the same checkpoint (writeCheckpoint's
          // `existingCheckpoint`), after the first attempt ended if it was still running.
          () => this.#connections.withClient(handle, write),
        ),
      );
    } catch (error) {
      throw toCrewlineError(error, 'write', handle.location);
    }
  }

  /**
   * Stores consecutive checkpoints of one location in one transaction, in order: all of them or none
   * (the runtime then writes them one by one, each with its own outcome). Each keeps its own row and
   * parent, continues the one before it as a single write would, and has its lease checked inside
   * the transaction; a checkpoint already stored fails the group (`conflict`).
   */
  async writeBatch(location: string, checkpoints: readonly CheckpointWrite[]): Promise<StoredCheckpoint[]> {
    const handle = this.#connections.handle(location);
    try {
      for (const checkpoint of checkpoints) checkWritable(checkpoint);
      if (checkpoints.length === 0) return [];
      await this.#connections.ensureWritable(handle);
      const lineages = [...new Set(checkpoints.map((checkpoint) => checkpoint.metadata.lineageId))];
      const write = (client: pg.PoolClient) =>
        writeGroup(client, handle, checkpoints, this.options.maxCheckpointBytes);
      return await handle.inOrderOfAll(lineages, () =>
        this.#connections.onceMoreIfLost(
          handle,
          () => this.#connections.withClient(handle, write),
          // The group commits whole or not at all, and may have before its answer was lost.
          () =>
            this.#connections.withClient(handle, (client) =>
              retriedGroup(client, handle, checkpoints, write),
            ),
        ),
      );
    } catch (error) {
      throw toCrewlineError(error, 'write', handle.location);
    }
  }

  async read(location: string, id: string): Promise<RawCheckpoint> {
    checkId(component, id);
    const text = await this.#connections.reading(
      location,
      async (client, handle) => {
        if (!(await schemaExists(client, handle.schema)))
          throw await missingSchemaError(client, handle.schema, handle.location);
        throw postgresError(
          'not_found',
          `no checkpoint "${id}" in ${handle.location}: its schema holds no checkpoints`,
        );
      },
      (client, handle) => readCheckpointText(client, handle, id, this.options.maxCheckpointBytes),
    );
    return { text };
  }

  /**
   * Resolves when the location's schema exists (empty or holding checkpoints); else rejects with a
   * `not_found` error naming the schema, the schemas that hold checkpoints and how to fix it. For a
   * reader that must not take a misspelt `?schema=` for an empty store (`crewline checkpoint list`):
   * `list` itself lists nothing there, as for any location nothing was written to yet.
   */
  async checkLocationExists(location: string): Promise<void> {
    const handle = this.#connections.handle(location);
    try {
      await this.#connections.withClient(handle, async (client) => {
        if (handle.readable || (await schemaExists(client, handle.schema))) return;
        throw await missingSchemaError(client, handle.schema, handle.location);
      });
    } catch (error) {
      throw toCrewlineError(error, 'read', handle.location);
    }
  }

  async list(location: string, query: PostgresListQuery = {}): Promise<StoredCheckpoint[]> {
    checkListQuery(query);
    return this.#connections.reading(
      location,
      () => [],
      (client, handle) => listCheckpoints(client, handle, query),
    );
  }

  async latest(location: string, query: ListQuery = {}): Promise<StoredCheckpoint | undefined> {
    return (await this.list(location, { ...query, limit: 1 }))[0];
  }

  async prune(location: string, options: PruneOptions): Promise<PruneResult> {
    checkPruneOptions(component, options);
    const dryRun = options.dryRun ?? false;
    if (options.keep === undefined && options.olderThan === undefined) return { removed: [], dryRun };
    const { planned, collectPending } = await this.#connections.reading(
      location,
      () => ({ planned: [] as StoredCheckpoint[], collectPending: false }),
      async (client, handle) => {
        const planned = await selectPruned(client, handle, options);
        // A prune killed after its commit, before its collection, left its garbage pending; the next
        // one usually has nothing to remove (the same retention), and collects it once it is due.
        const collectPending = !dryRun && planned.length === 0 && (await garbageDue(client, handle));
        return { planned, collectPending };
      },
    );
    const handle = this.#connections.handle(location);
    if (collectPending) await this.#collectQuietly(handle);
    if (dryRun || planned.length === 0) return { removed: planned, dryRun };
    try {
      await this.#connections.ensureWritable(handle);
      const { removed, collect } = await this.#connections.withClient(handle, (client) =>
        pruneCheckpoints(client, handle, options),
      );
      for (const stored of removed) handle.heads.forget(stored.id);
      if (collect) await this.#collectQuietly(handle);
      return { removed, dryRun };
    } catch (error) {
      throw toCrewlineError(error, 'write', handle.location);
    }
  }

  async delete(location: string, id: string): Promise<boolean> {
    checkId(component, id);
    const exists = await this.#connections.reading(
      location,
      () => false,
      async () => true,
    );
    if (!exists) return false;
    const handle = this.#connections.handle(location);
    try {
      await this.#connections.ensureWritable(handle);
      const { removed: deleted, collect } = await this.#connections.withClient(handle, (client) =>
        deleteCheckpoint(client, handle, id),
      );
      handle.heads.forget(id);
      if (collect) await this.#collectQuietly(handle);
      return deleted;
    } catch (error) {
      throw toCrewlineError(error, 'write', handle.location);
    }
  }

  /** Garbage collection after a removal is housekeeping: its failure must not fail the removal. */
  async #collectQuietly(handle: SchemaHandle): Promise<void> {
    try {
      await this.#connections.ensureWritable(handle);
      await this.#connections.withClient(handle, (client) => collectGarbage(client, handle));
    } catch (error) {
      logger.warn(
        component,
        `garbage collection of ${handle.location} failed; it will be retried later`,
        error,
      );
    }
  }

  /**
   * Removes now every event and chunk that no remaining checkpoint needs (prune and delete do this
   * on their own once enough has been removed). Returns what was removed.
   */
  async collectGarbage(location: string): Promise<GarbageReport> {
    const exists = await this.#connections.reading(
      location,
      () => false,
      async () => true,
    );
    const handle = this.#connections.handle(location);
    if (!exists) return { streams: 0, events: 0, chunks: 0 };
    try {
      await this.#connections.ensureWritable(handle);
      return await this.#connections.withClient(handle, (client) => collectGarbage(client, handle));
    } catch (error) {
      throw toCrewlineError(error, 'write', handle.location);
    }
  }

  /** Counts and sizes of a location's tables, for tests, benchmarks and `crewline checkpoint info`. */
  async stats(location: string): Promise<DatabaseStats | undefined> {
    return this.#connections.reading(location, () => undefined, readDatabaseStats);
  }

  async claimLease(location: string, request: LeaseRequest): Promise<Lease> {
    checkLeaseRequest(component, request);
    const handle = this.#connections.handle(location);
    try {
      // Claimed again by the same owner when the first claim was granted before its answer was lost.
      return await this.#connections.onceMoreIfLost(handle, async () => {
        await this.#connections.ensureWritable(handle);
        return this.#connections.withClient(handle, (client) => claimLease(client, handle, request));
      });
    } catch (error) {
      throw toCrewlineError(error, 'write', handle.location);
    }
  }

  async renewLease(location: string, token: LeaseToken, ttlMs: number): Promise<Lease> {
    checkLeaseToken(component, token);
    checkLeaseDuration(component, ttlMs);
    return this.#connections.reading(
      location,
      () => {
        throw leaseLost(
          component,
          token.lineageId,
          { held: false, mine: false, holder: null, expiresInMs: null },
          'the lease was not renewed',
        );
      },
      (client, handle) => renewLease(client, handle, token, ttlMs),
      true,
    );
  }

  async releaseLease(location: string, token: LeaseToken): Promise<void> {
    checkLeaseToken(component, token);
    await this.#connections.reading(
      location,
      () => undefined,
      (client, handle) => releaseLease(client, handle, token),
      true,
    );
  }

  /** Closes every pool this provider opened. The provider can be used again afterwards. */
  async close(): Promise<void> {
    await this.#connections.close();
  }
}
