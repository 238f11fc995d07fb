import { randomUUID } from 'node:crypto';
import { CrewlineError } from '@crewline/events';
import type pg from 'pg';
import PgBoss from 'pg-boss';
import { inTransaction, openPool, type QueueLocation } from './connection.js';
import { checkQueueExists, type QueueUse } from './missing-queue.js';
import { queueOpenError } from './queue-open-error.js';
import { type RunRecord, type RunRow, recordOf } from './run-record.js';
import { wakeChannel } from './run-wake.js';
import { migrateRunsTable, runsTable } from './schema.js';

/** The pg-boss queue every run is delivered through. */
export const RUNS_QUEUE = 'crewline-runs';

/** pg-boss's limit is 24 h; a job is only the delivery, the run's own lease says whether it lives. */
const MAX_JOB_EXPIRY_SECONDS = 23 * 3600;

type Queryable = Pick<pg.PoolClient, 'query'>;

/** pg-boss's `db` option over one of our clients: its sends join our transaction. */
function bossDb(client: Queryable): PgBoss.Db {
  return { executeSql: (text, values) => client.query(text, values) };
}

/**
 * The runs table and pg-boss over one pool. The runs table is the source of truth for a run (status,
 * holder, attempts, lineage, progress); a pg-boss job only delivers "run R, attempt N" to a worker,
 * and every attempt gets a new job, sent in the same transaction that sets the row's `job_id`.
 */
export class QueueStore {
  readonly location: QueueLocation;
  readonly pool: pg.Pool;
  readonly boss: PgBoss;
  readonly table: string;
  /** Where attempts that can be taken at once are announced (see RunWake). */
  readonly wakeChannel: string;
  readonly #create: boolean;
  #started: Promise<void> | undefined;
  #reachedServer = false;

  /**
   * `create`: whether {@link start} creates a queue that does not exist (a worker's store, or a
   * client told to); else it refuses one (see checkQueueExists).
   */
  constructor(
    location: QueueLocation,
    options: { poolSize: number; applicationName: string; maintenance: boolean; create: boolean },
  ) {
    this.location = location;
    this.#create = options.create;
    this.pool = openPool(location, options.poolSize, options.applicationName);
    // Emitted once a connection is open (logged in): the server was there at least once.
    this.pool.on('connect', () => {
      this.#reachedServer = true;
    });
    this.table = runsTable(location.schema);
    this.wakeChannel = wakeChannel(location);
    this.boss = new PgBoss({
      db: bossDb(this.pool as unknown as Queryable),
      schema: location.queueSchema,
      // Maintenance (expiring and archiving jobs) is the workers' business; a client that only
      // enqueues or lists starts none.
      supervise: options.maintenance,
      schedule: false,
      migrate: true,
    });
    this.boss.on('error', () => undefined);
  }

  /**
   * Whether a connection of this store ever opened: its server exists and let it in, so a connection
   * lost or refused from then on is an outage (a restart, a failover), not a wrong address.
   */
  get reachedServer(): boolean {
    return this.#reachedServer;
  }

  /**
   * Opens the queue once per store: upgrades what is there and creates what is missing (runs table,
   * pg-boss's schema and queue). A store that does not create refuses a queue whose runs table does
   * not exist yet (`not_found`), its advice fitting `use`.
   */
  start(use: QueueUse = 'read'): Promise<void> {
    this.#started ??= (async () => {
      try {
        if (!this.#create) await checkQueueExists(this.pool, this.location, use);
        await migrateRunsTable(this.pool, this.location.schema);
        await this.boss.start();
        await this.boss.createQueue(RUNS_QUEUE, { name: RUNS_QUEUE, policy: 'standard', retryLimit: 0 });
      } catch (error) {
        this.#started = undefined;
        if (CrewlineError.hasCode(error, 'not_found')) throw error;
        throw queueOpenError(this.location, error);
      }
    })();
    return this.#started;
  }

  /**
   * Sends the job that delivers the run's next attempt (in `client`'s transaction), to be taken no
   * sooner than `startAfterMs` from now on the server's clock.
   */
  async sendAttempt(
    client: Queryable,
    run: { id: string; priority: number; timeoutMs: number | null },
    startAfterMs = 0,
  ): Promise<string> {
    const jobId = randomUUID();
    const expireInSeconds = Math.min(
      MAX_JOB_EXPIRY_SECONDS,
      Math.max(60, Math.ceil((run.timeoutMs ?? MAX_JOB_EXPIRY_SECONDS * 1000) / 1000) + 60),
    );
    await this.boss.send(
      RUNS_QUEUE,
      { runId: run.id },
      {
        id: jobId,
        priority: run.priority,
        retryLimit: 0,
        expireInSeconds,
        // An interval, not a number: pg-boss adds text that does not end in Z to the server's now() as
        // an interval, to the microsecond; a number would be whole seconds to us (a 500 ms back-off
        // rounded up to 1 s), and a Date would be this machine's clock, not the server's.
        ...(startAfterMs > 0 ? { startAfter: `${Math.round(startAfterMs)} milliseconds` } : {}),
        db: bossDb(client),
      },
    );
    // Idle workers take it when it commits, not at their next poll (a delayed one waits for a poll).
    if (startAfterMs <= 0) await this.announce(client, jobId);
    return jobId;
  }

  /**
   * Wakes the idle slots of every worker of the queue when `client`'s transaction commits (see
   * RunWake): a run can be taken now. `what` says what for whoever reads the channel.
   */
  async announce(client: Queryable, what: string): Promise<void> {
    await client.query('SELECT pg_notify($1, $2)', [this.wakeChannel, what]);
  }

  /** Withdraws a job sent by {@link sendAttempt} that was not delivered yet: it delivers nothing now. */
  async withdrawAttempt(jobId: string): Promise<void> {
    await this.boss.cancel(RUNS_QUEUE, jobId);
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    await this.start();
    const { rows } = await this.pool.query<RunRow>(`SELECT * FROM ${this.table} WHERE id = $1`, [runId]);
    return rows[0] && recordOf(rows[0]);
  }

  transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, work);
  }

  async close(): Promise<void> {
    await this.boss.stop({ graceful: false, close: false, wait: true }).catch(() => undefined);
    await this.pool.end().catch(() => undefined);
    this.#started = undefined;
  }
}
