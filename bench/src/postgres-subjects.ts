// The Postgres backends of the crew-50 storage benchmark: PostgresProvider through a RuntimeState, and
// LangGraph's PostgresSaver fed the equivalent state sequence. Each run stores into a schema of its
// own on the one server, measured with the same query for both, and dropped afterwards.
import { randomBytes } from 'node:crypto';
import { PostgresProvider, type PostgresProviderOptions } from '@crewline/provider-postgres';
import { type CheckpointWrite, encodeValue, redactSecrets } from '@crewline/runtime-state';
import pg from 'pg';
import type { StorageRunResult, StorageSubject } from './storage-subjects.js';
import { timedProvider } from './storage-subjects.js';

/** Where the bytes of a schema are: `pg_total_relation_size` of its tables, split. */
export interface SchemaBytes {
  total: number;
  /** Table rows (main fork with its free space and visibility maps). */
  heap: number;
  /** TOAST tables (values compressed or moved out of line) with their indexes. */
  toast: number;
  /** Every index of the tables. */
  indexes: number;
}

/** A connection of the benchmark itself, for what it measures behind the backends' backs. */
export class BenchServer {
  readonly #client: pg.Client;

  private constructor(
    readonly url: string,
    client: pg.Client,
  ) {
    this.#client = client;
  }

  static async connect(url: string): Promise<BenchServer> {
    const client = new pg.Client({ connectionString: url, application_name: 'crewline-bench' });
    await client.connect();
    return new BenchServer(url, client);
  }

  /** The sizes of every table of `schema`, the one measure applied to both backends. */
  async schemaBytes(schema: string): Promise<SchemaBytes> {
    const { rows } = await this.#client.query<Record<keyof SchemaBytes, string>>(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS total,
          coalesce(sum(pg_table_size(c.oid) - CASE WHEN c.reltoastrelid <> 0
            THEN pg_total_relation_size(c.reltoastrelid) ELSE 0 END), 0) AS heap,
          coalesce(sum(CASE WHEN c.reltoastrelid <> 0 THEN pg_total_relation_size(c.reltoastrelid) ELSE 0 END), 0) AS toast,
          coalesce(sum(pg_indexes_size(c.oid)), 0) AS indexes
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind = 'r'`,
      [schema],
    );
    const row = rows[0]!;
    return {
      total: Number(row.total),
      heap: Number(row.heap),
      toast: Number(row.toast),
      indexes: Number(row.indexes),
    };
  }

  /** The server's WAL position, to count the bytes of WAL a run made (server-wide). */
  async walPosition(): Promise<string> {
    const { rows } = await this.#client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
    return rows[0]!.lsn;
  }

  async walBytesSince(start: string): Promise<number> {
    const { rows } = await this.#client.query<{ bytes: string }>(
      'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn) AS bytes',
      [start],
    );
    return Number(rows[0]!.bytes);
  }

  async setting(name: string): Promise<string> {
    const { rows } = await this.#client.query<{ value: string }>('SELECT current_setting($1) AS value', [
      name,
    ]);
    return rows[0]!.value;
  }

  async serverVersion(): Promise<string> {
    return this.setting('server_version');
  }

  async dropSchema(schema: string): Promise<void> {
    await this.#client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }

  async close(): Promise<void> {
    await this.#client.end();
  }
}

/** A fresh schema name for one run. */
export function benchSchema(prefix: string): string {
  return `bench_${prefix}_${randomBytes(5).toString('hex')}`;
}

/** `url` with `?schema=` (or `&schema=`) naming `schema`. */
export function withSchema(url: string, schema: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`;
}

/** The byte breakdown of each subject's last run, by subject name (for the report). */
export type Breakdowns = Map<string, SchemaBytes>;

/** Counts a run's WAL and, once it is done, measures and drops its schema. */
async function finishRun(
  server: BenchServer,
  schema: string,
  walStart: Promise<string>,
  breakdowns: Breakdowns,
  name: string,
): Promise<{ storedBytes: number; bytesWritten: number }> {
  const bytesWritten = await server.walBytesSince(await walStart);
  const bytes = await server.schemaBytes(schema);
  breakdowns.set(name, bytes);
  await server.dropSchema(schema);
  return { storedBytes: bytes.total, bytesWritten };
}

/**
 * PostgresProvider on crew-50, through its own RuntimeState of the shared run (`await
 * state.writeCheckpoint`, as the runtime does with a provider that writes asynchronously). The write
 * time is `provider.write` alone; the first write of a run also creates the run's schema.
 */
export function postgresProviderSubject(
  name: string,
  server: BenchServer,
  url: string,
  options: PostgresProviderOptions,
  breakdowns: Breakdowns,
): StorageSubject {
  return {
    name,
    open(_directory, run) {
      const writeMs: number[] = [];
      const endToEndMs: number[] = [];
      const last: { write?: CheckpointWrite } = {};
      const inner = new PostgresProvider(options);
      const provider = timedProvider(inner, writeMs, last);
      const schema = benchSchema('crewline');
      const location = provider.resolveLocation(withSchema(url, schema));
      const state = run.addState({ provider, location });
      const walStart = server.walPosition();
      return {
        async afterEvent(trigger) {
          await walStart;
          const started = performance.now();
          await state.writeCheckpoint({ trigger });
          endToEndMs.push(performance.now() - started);
        },
        async finish(): Promise<StorageRunResult> {
          await state.settle();
          await inner.close();
          return {
            writeMs,
            endToEndMs,
            ...(await finishRun(server, schema, walStart, breakdowns, name)),
            finalCheckpointBytes: Buffer.byteLength(last.write!.text(), 'utf8'),
          };
        },
      };
    },
  };
}

/**
 * LangGraph's `PostgresSaver.put` (@langchain/langgraph-checkpoint-postgres) fed the same state
 * sequence the way a LangGraph graph stores it: inputs, entities and the event history as three
 * channels. `put` stores each channel whose version changed as a blob of its whole value (what a
 * LangGraph channel keeps, a list channel included) and the checkpoint row; inputs never change, so
 * they are stored once. `setup()` runs before the first put, untimed.
 */
export async function postgresSaverSubject(
  server: BenchServer,
  url: string,
  breakdowns: Breakdowns,
): Promise<StorageSubject> {
  const [{ PostgresSaver }, { uuid6 }] = await Promise.all([
    import('@langchain/langgraph-checkpoint-postgres'),
    import('@langchain/langgraph-checkpoint'),
  ]);
  const name = 'LangGraph PostgresSaver';
  return {
    name,
    open(_directory, run) {
      const schema = benchSchema('langgraph');
      const saver = PostgresSaver.fromConnString(url, { schema });
      const ready = saver.setup();
      const walStart = ready.then(() => server.walPosition());
      const writeMs: number[] = [];
      let parentId: string | undefined;
      let step = 0;
      let finalCheckpointBytes = 0;
      return {
        async afterEvent(trigger) {
          await walStart;
          const { entities } = run.state.snapshot(trigger);
          const channelValues = {
            inputs: redactSecrets(encodeValue(run.state.inputs)),
            entities,
            events: run.state.events.slice(),
          };
          const version = step + 1;
          const checkpoint = {
            v: 4,
            id: uuid6(step),
            ts: new Date().toISOString(),
            channel_values: channelValues,
            channel_versions: { inputs: 1, entities: version, events: version },
            versions_seen: {},
          };
          const newVersions: Record<string, number> = { entities: version, events: version };
          if (step === 0) newVersions.inputs = 1;
          const config = {
            configurable: { thread_id: 'crew-50', checkpoint_ns: '', checkpoint_id: parentId },
          };
          const started = performance.now();
          const next = await saver.put(
            config,
            checkpoint,
            { source: 'loop', step, parents: {} },
            newVersions,
          );
          writeMs.push(performance.now() - started);
          parentId = next.configurable?.checkpoint_id as string;
          step += 1;
          finalCheckpointBytes = Buffer.byteLength(JSON.stringify(channelValues), 'utf8');
        },
        async finish(): Promise<StorageRunResult> {
          await walStart;
          await saver.end();
          return {
            writeMs,
            ...(await finishRun(server, schema, walStart, breakdowns, name)),
            finalCheckpointBytes,
          };
        },
      };
    },
  };
}
