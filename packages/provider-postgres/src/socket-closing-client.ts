import { logger } from '@crewline/events';
import pg from 'pg';
import { component } from './errors.js';
import { isQueryReadTimeout, QueryTimedOut, rememberTimedOut } from './query-timeout.js';

/** What a {@link SocketClosingClient} takes on top of pg's own client configuration. */
export interface SilenceWatchConfig {
  /**
   * How long a query may go without a byte from the server before the server is checked (see
   * {@link SocketClosingClient}), in milliseconds; asked at each query, so a limit a location gives
   * later counts from its next query on. None: no watch (the worker's clients).
   */
  silenceLimitMs?: () => number;
}

type ClientConfig = pg.ClientConfig & SilenceWatchConfig;

/** Longest a check of a silent server may take to connect and to answer `SELECT`, in milliseconds. */
const checkLimitMs = 5_000;

/**
 * A `pg.Client` that closes its socket when it fails to connect, and when a query's server went
 * silent. pg leaves the socket of a login it gave up on its own side open (no password for a server
 * that asks for one: "SASL: ... client password must be a string"), and the server waits for an
 * answer until its authentication_timeout (60 s by default): a command that said at once what was
 * wrong could not end until then. The provider's pools and the worker's (its queue, its listening
 * connection) use it.
 *
 * Silence, not duration (`silenceLimitMs`, the provider's `queryTimeoutMs`): a query that waits for
 * a lock held by a long prune elsewhere, a layout upgrade of a big store, or a large checkpoint over
 * a slow link may take far longer than any fixed limit, and must not fail for it. So each byte that
 * arrives on the connection starts the limit again, and when it passes a check on a new, short-lived
 * connection (at most {@link checkLimitMs} to connect and answer) asks the server whether it is still
 * there and still has the query's session: when it answers so, the query is waited for (a limit more,
 * then checked again). Only a check that gets no answer (a network that silently drops packets, a
 * host that froze), or finds the session gone (its end never came through), gives the query up.
 *
 * Then pg would not stop waiting on its own: the query stays the connection's active one, so what is
 * sent after it (the ROLLBACK of the transaction it was in, the next caller's query) would wait behind
 * an answer that may never come. The client is closed at once instead, and the query fails with a
 * {@link QueryTimedOut}. A query's own `query_timeout` (a lease query's, from its lease time) stays
 * pg's: a limit on how long it may take, whether the server answers or not; the client is closed when
 * it passes too. Only queries that return a promise (every query the provider makes) are watched.
 */
export class SocketClosingClient extends pg.Client {
  constructor(config?: string | ClientConfig) {
    super(config);
    const silenceLimitMs = typeof config === 'object' ? config.silenceLimitMs : undefined;
    if (typeof config === 'object' && silenceLimitMs !== undefined) {
      const copy = { ...config, silenceLimitMs };
      // pg-pool hides the password (not enumerable: no stack trace or log shows it); so does the copy.
      Object.defineProperty(copy, 'password', { enumerable: false, value: config.password });
      configs.set(this, copy);
    }
  }

  override connect(): Promise<pg.Client>;
  override connect(callback: ((error: Error) => void) | ((error: null, client: pg.Client) => void)): void;
  override connect(
    callback?: ((error: Error) => void) | ((error: null, client: pg.Client) => void),
  ): Promise<pg.Client> | undefined {
    if (callback) {
      super.connect((error: Error | null) => {
        if (error) socketOf(this)?.destroy();
        (callback as (error: Error | null, client: pg.Client) => void)(error, this);
      });
      return;
    }
    return super.connect().catch((error: unknown) => {
      socketOf(this)?.destroy();
      throw error;
    });
  }
}

/** The configuration of each client that watches its queries' silence (what a check connects with). */
const configs = new WeakMap<pg.Client, ClientConfig & { silenceLimitMs: () => number }>();

/** The socket under a client (node-postgres keeps it on its connection, which its types do not declare). */
export function socketOf(client: pg.Client): { destroy(): void } | undefined {
  return (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream;
}

/** `pg.Client`'s own `query`, which the override below calls. */
const clientQuery = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;

SocketClosingClient.prototype.query = function query(this: SocketClosingClient, ...args: unknown[]) {
  const config = args[0];
  const plainConfig =
    typeof config === 'object' &&
    config !== null &&
    typeof (config as { submit?: unknown }).submit !== 'function';
  // pg's own limit: the query's, else the pool's (none in the provider's pools).
  const ownLimit = plainConfig ? limitOf((config as { query_timeout?: unknown }).query_timeout) : undefined;
  const readLimit =
    ownLimit ??
    limitOf(
      (this as unknown as { connectionParameters?: { query_timeout?: unknown } }).connectionParameters
        ?.query_timeout,
    );
  const result = clientQuery.apply(this, args);
  if (!isPromise(result)) return result;
  const watched = configs.get(this);
  const watch = watched === undefined ? undefined : new SilenceWatch(this, watched);
  return result.then(
    (answer: unknown) => {
      watch?.stop();
      return answer;
    },
    (error: unknown) => {
      watch?.stop();
      // The watch closed the client: the query failed with "Connection terminated" for it.
      if (watch?.timedOut !== undefined) throw watch.timedOut;
      if (readLimit === undefined || !isQueryReadTimeout(error)) throw error;
      const timedOut = new QueryTimedOut(readLimit, ownLimit !== undefined ? 'own limit' : 'read timeout', {
        cause: error,
      });
      giveUp(this, timedOut);
      throw timedOut;
    },
  );
} as typeof pg.Client.prototype.query;

/**
 * Closes `client` whose query was given up on, and remembers why (it is never lent again). Before the
 * caller hears of it (its ROLLBACK would queue behind the query). With a query active, pg's end()
 * destroys the socket rather than saying goodbye to a server that may not hear it; ended on purpose,
 * the client emits no `error` that would read as a lost connection.
 */
function giveUp(client: pg.Client, timedOut: QueryTimedOut): void {
  rememberTimedOut(client, timedOut);
  client.end().catch(() => undefined);
}

/**
 * Watches one query for silence (see {@link SocketClosingClient}): `timedOut` is set, and the client
 * closed, when the server stayed silent for the limit and a check found it gone.
 */
class SilenceWatch {
  timedOut: QueryTimedOut | undefined;
  readonly #client: pg.Client;
  readonly #config: ClientConfig;
  readonly #limitMs: number;
  readonly #socket: NodeJS.EventEmitter | undefined;
  /** When the server last gave a sign of life: a byte on the connection, or a check it answered. */
  #lastSignAt = performance.now();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #toldWaiting = false;
  readonly #onData = () => {
    this.#lastSignAt = performance.now();
  };

  constructor(client: pg.Client, config: ClientConfig & { silenceLimitMs: () => number }) {
    this.#client = client;
    this.#config = config;
    this.#limitMs = config.silenceLimitMs();
    this.#socket = (
      client as unknown as { connection?: { stream?: NodeJS.EventEmitter } }
    ).connection?.stream;
    this.#socket?.on('data', this.#onData);
    this.#arm(this.#limitMs);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#socket?.off('data', this.#onData);
  }

  #arm(delayMs: number): void {
    this.#timer = setTimeout(() => void this.#limitPassed(), delayMs);
  }

  async #limitPassed(): Promise<void> {
    if (this.#stopped) return;
    const silentMs = performance.now() - this.#lastSignAt;
    if (silentMs < this.#limitMs) {
      this.#arm(this.#limitMs - silentMs);
      return;
    }
    const checkedAt = performance.now();
    const check = await checkServer(
      this.#config,
      processIdOf(this.#client),
      Math.min(checkLimitMs, this.#limitMs),
    );
    if (this.#stopped) return;
    if (check.verdict === 'there' || this.#lastSignAt > checkedAt) {
      if (check.verdict === 'there') {
        this.#lastSignAt = performance.now();
        this.#tellWaiting();
      }
      this.#arm(Math.max(0, this.#limitMs - (performance.now() - this.#lastSignAt)));
      return;
    }
    this.timedOut = new QueryTimedOut(this.#limitMs, check.verdict, { cause: check.cause });
    giveUp(this.#client, this.timedOut);
  }

  /** Once per query: a long wait is normal (a lock, a long operation) but worth knowing about. */
  #tellWaiting(): void {
    if (this.#toldWaiting) return;
    this.#toldWaiting = true;
    const { host, port, database } = this.#client as unknown as {
      host?: string;
      port?: number;
      database?: string;
    };
    logger.info(
      component,
      `a query to ${host}:${port}/${database} has had no answer for ${this.#limitMs} ms, but the server answers on a new connection and still runs it (it waits for a lock or does a long operation), so it is waited for`,
    );
  }
}

type Check =
  | { verdict: 'there'; cause?: undefined }
  | { verdict: 'no answer' | 'session gone'; cause: unknown };

/**
 * Asks the server, on a new connection of at most `limitMs` to connect and answer, whether it is there
 * and still has the session of backend `processId`. The session counts as gone only when the
 * check's own backend pid is the one its login announced: behind a connection pooler (PgBouncer) the
 * announced pids are the pooler's, and the server knows none of them.
 */
async function checkServer(config: ClientConfig, processId: number | null, limitMs: number): Promise<Check> {
  const { silenceLimitMs: _silenceLimitMs, ...connection } = config;
  let check: SocketClosingClient | undefined;
  try {
    check = new SocketClosingClient({
      ...connection,
      password: config.password,
      connectionTimeoutMillis: limitMs,
      query_timeout: limitMs,
    });
    // A socket error after the check gave up on it must not end the process.
    check.on('error', () => undefined);
    await check.connect();
    const { rows } = await check.query<{ own_pid: number; present: boolean }>({
      text: 'SELECT pg_backend_pid() AS own_pid, EXISTS (SELECT FROM pg_stat_activity WHERE pid = $1) AS present',
      values: [processId ?? 0],
    });
    const pidsAreTheServers = rows[0]?.own_pid === processIdOf(check);
    if (pidsAreTheServers && processId !== null && rows[0]?.present === false)
      return { verdict: 'session gone', cause: new Error(`backend ${processId} is no longer on the server`) };
    return { verdict: 'there' };
  } catch (error) {
    // A refusal (too many connections, a server starting up or shutting down) is an answer too.
    if (error instanceof pg.DatabaseError) return { verdict: 'there' };
    return { verdict: 'no answer', cause: error };
  } finally {
    check?.end().catch(() => undefined);
  }
}

/** The backend pid the server announced at login (pg keeps it; its types do not declare it). */
function processIdOf(client: pg.Client): number | null {
  const { processID } = client as unknown as { processID?: unknown };
  return typeof processID === 'number' ? processID : null;
}

/** A time limit in milliseconds, when `value` is one (pg takes `false`, `0` or none as "no limit"). */
function limitOf(value: unknown): number | undefined {
  return typeof value === 'number' && value > 0 ? value : undefined;
}

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
