import { createHash } from 'node:crypto';
import { logger } from '@crewline/events';
import { SocketClosingClient, socketOf } from '@crewline/provider-postgres/internal';
import type pg from 'pg';
import type { QueueLocation } from './connection.js';
import { component } from './errors.js';

/**
 * The channel a queue's new attempts are announced on: one per schema (a name Postgres keeps whole:
 * channel names are cut at 63 bytes, schema names may be that long themselves).
 */
export function wakeChannel(location: QueueLocation): string {
  return `crewline_runs_${createHash('sha256').update(location.schema).digest('hex').slice(0, 16)}`;
}

/** How long closing waits for the server to end the listener's connection before dropping it. */
const closeWaitMs = 1000;

/** Reconnecting after a lost listener connection starts at this delay and doubles up to the last. */
const reconnectDelaysMs = [200, 1000, 5000, 30_000];

/**
 * Wakes a worker's idle slots when a run becomes available, instead of at their next poll: one
 * connection of its own LISTENs on the queue's channel, and every attempt sent without a delay
 * (enqueue, fork, resume, a run handed back or retried at once) NOTIFYs it in the sending
 * transaction, so the wake comes when the attempt is committed. Polling goes on beside it: a
 * notification lost with a connection, or a delayed retry coming due, is still taken within a poll.
 */
export class RunWake {
  readonly #location: QueueLocation;
  readonly #channel: string;
  readonly #onWake: () => void;
  #client: pg.Client | undefined;
  #closed = false;
  #failures = 0;
  #retry: NodeJS.Timeout | undefined;

  constructor(location: QueueLocation, onWake: () => void) {
    this.#location = location;
    this.#channel = wakeChannel(location);
    this.#onWake = onWake;
  }

  /** Listens; a failure to connect is logged and retried (the worker polls meanwhile). */
  async start(): Promise<void> {
    if (this.#closed || this.#client !== undefined) return;
    const client = new SocketClosingClient({
      connectionString: this.#location.connectionString,
      application_name: `crewline-worker-wake ${this.#channel}`,
      connectionTimeoutMillis: 10_000,
      // A listener idle for hours behind a NAT or load balancer that drops it silently would get no
      // notification and never reconnect: TCP keepalive from 10 s finds such a connection dead.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    this.#client = client;
    client.on('notification', (message) => {
      if (message.channel === this.#channel) this.#onWake();
    });
    client.on('error', () => this.#lost(client));
    client.on('end', () => this.#lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN "${this.#channel}"`);
      this.#failures = 0;
      // Whatever was announced while no connection listened is taken now rather than at a poll.
      this.#onWake();
    } catch (error) {
      logger.warn(component, `listening for new runs failed; polling until it is back`, error);
      this.#lost(client);
    }
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => undefined);
    if (this.#closed) return;
    const delay = reconnectDelaysMs[Math.min(this.#failures, reconnectDelaysMs.length - 1)]!;
    this.#failures += 1;
    this.#retry = setTimeout(() => void this.start(), delay);
    this.#retry.unref();
  }

  /**
   * Stops listening. Waits at most {@link closeWaitMs} for the server to say goodbye: a connection a
   * NAT dropped silently would otherwise hold a worker's SIGTERM until TCP gives up (minutes).
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    const client = this.#client;
    this.#client = undefined;
    if (client === undefined) return;
    client.removeAllListeners('notification');
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, closeWaitMs);
    });
    await Promise.race([client.end().catch(() => undefined), waited]);
    clearTimeout(timer);
    socketOf(client)?.destroy();
  }
}
