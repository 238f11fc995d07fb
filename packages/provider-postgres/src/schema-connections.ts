// How a PostgresProvider reaches its locations: one pool per server, one schema handle per location,
// the locations it parsed, and the ways its operations run on a connection (once more when it was
// lost; creating the layout before a write; reading only where the layout exists). Split from
// postgres-provider.ts, whose operations go through it.
import { logger } from '@crewline/events';
import type pg from 'pg';
import { component, toCrewlineError } from './errors.js';
import { type PostgresLocation, parseLocation } from './location.js';
import { inspectSchema, migrateSchema, refuseUnusable } from './migrations.js';
import { onceMoreIfLost } from './once-more-if-lost.js';
import type { ResolvedPostgresProviderOptions } from './options.js';
import { createPool } from './pool.js';
import { withPooledClient } from './pooled-client.js';
import { SchemaHandle } from './schema-handle.js';

/** Resolved locations remembered per provider (a write resolves its location each time). */
const rememberedLocations = 256;

/** The pools, schema handles and parsed locations of one provider. */
export class SchemaConnections {
  readonly #options: ResolvedPostgresProviderOptions;
  readonly #pools = new Map<string, pg.Pool>();
  readonly #handles = new Map<string, SchemaHandle>();
  readonly #locations = new Map<string, PostgresLocation>();
  /** Pools whose server answered: a connection to it that fails later was lost, not refused. */
  readonly #reached = new WeakSet<pg.Pool>();

  constructor(options: ResolvedPostgresProviderOptions) {
    this.#options = options;
  }

  parse(location: string): PostgresLocation {
    const known = this.#locations.get(location);
    if (known !== undefined) return known;
    const parsed = parseLocation(location, this.#options.schema);
    if (this.#locations.size >= rememberedLocations) this.#locations.clear();
    this.#locations.set(location, parsed);
    // The canonical form parses to itself: remember it too, so writes skip parsing it again.
    this.#locations.set(parsed.location, parsed);
    return parsed;
  }

  handle(location: string): SchemaHandle {
    const parsed = this.parse(location);
    let handle = this.#handles.get(parsed.location);
    if (handle === undefined) {
      let pool = this.#pools.get(parsed.server);
      if (pool === undefined) {
        pool = createPool(parsed.server, this.#options);
        this.#pools.set(parsed.server, pool);
      }
      handle = new SchemaHandle(parsed.location, parsed.schema, pool);
      this.#handles.set(parsed.location, handle);
    }
    return handle;
  }

  /**
   * Runs `work` on a pooled connection; a connection that failed or died (the server restarted while
   * it was out) is closed rather than reused, and never crashes the process.
   */
  withClient<T>(handle: SchemaHandle, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return withPooledClient(handle.pool, (client) => {
      this.#reached.add(handle.pool);
      return work(client);
    });
  }

  /** {@link onceMoreIfLost} on `handle`'s server. */
  onceMoreIfLost<T>(handle: SchemaHandle, attempt: () => Promise<T>, again?: () => Promise<T>): Promise<T> {
    return onceMoreIfLost(() => this.#reached.has(handle.pool), attempt, again);
  }

  /** Creates or upgrades the layout once per location (the first write, claim or removal). */
  ensureWritable(handle: SchemaHandle): Promise<void> {
    handle.writable ??= this.withClient(handle, async (client) => {
      await migrateSchema(client, handle.schema, handle.location);
      handle.readable = true;
    }).catch((error: unknown) => {
      handle.writable = undefined;
      throw error;
    });
    return handle.writable;
  }

  /** Whether the location holds crewline's layout (refused when unusable). Reads never create it. */
  async #isReadable(handle: SchemaHandle, client: pg.PoolClient): Promise<boolean> {
    if (handle.readable) return true;
    const state = await inspectSchema(client, handle.schema);
    refuseUnusable(state, handle.schema, handle.location);
    handle.readable = state.kind === 'crewline';
    return handle.readable;
  }

  /**
   * Runs `work` on a location whose layout exists, `empty` on one that has none yet (nothing is
   * created). `onceMoreIfLost`: an idempotent operation, tried once more when its connection was lost.
   */
  async reading<T>(
    location: string,
    empty: (client: pg.PoolClient, handle: SchemaHandle) => T | Promise<T>,
    work: (client: pg.PoolClient, handle: SchemaHandle) => Promise<T>,
    onceMoreIfLost = false,
  ) {
    const handle = this.handle(location);
    const attempt = () =>
      this.withClient(handle, async (client) =>
        (await this.#isReadable(handle, client)) ? work(client, handle) : empty(client, handle),
      );
    try {
      return await (onceMoreIfLost ? this.onceMoreIfLost(handle, attempt) : attempt());
    } catch (error) {
      throw toCrewlineError(error, 'read', handle.location);
    }
  }

  /** Closes every pool opened so far. New ones are opened at the next use. */
  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    this.#handles.clear();
    await Promise.all(
      pools.map((pool) =>
        pool.end().catch((error: unknown) => logger.warn(component, 'closing a Postgres pool failed', error)),
      ),
    );
  }
}
