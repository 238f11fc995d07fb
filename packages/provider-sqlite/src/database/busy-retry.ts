import { isBusy, sqliteError } from '../errors.js';

const sleeper = new Int32Array(new SharedArrayBuffer(4));

function backoffMs(attempt: number): number {
  const base = Math.min(10 * 2 ** attempt, 500);
  return base / 2 + Math.random() * (base / 2);
}

function giveUp(error: unknown, what: 'write' | 'read', location: string, waitedMs: number) {
  return sqliteError(
    what === 'write' ? 'write_failed' : 'read_failed',
    `database ${location} stayed locked by another connection for ${Math.round(waitedMs)} ms after busy_timeout; ` +
      'find the process holding a long transaction on it, or raise busyTimeoutMs/busyRetryMs',
    { cause: error },
  );
}

/**
 * Runs `operation`; when SQLite still reports the database busy after its own `busy_timeout`,
 * waits with jittered exponential backoff (blocking: this is the synchronous path) and tries again
 * for up to `retryMs`. Other errors pass through.
 */
export function retryWhenBusySync<T>(
  operation: () => T,
  retryMs: number,
  what: 'write' | 'read',
  location: string,
): T {
  const started = performance.now();
  for (let attempt = 0; ; attempt += 1) {
    try {
      return operation();
    } catch (error) {
      if (!isBusy(error)) throw error;
      const waited = performance.now() - started;
      if (waited >= retryMs) throw giveUp(error, what, location, waited);
      Atomics.wait(sleeper, 0, 0, Math.min(backoffMs(attempt), retryMs - waited));
    }
  }
}

/** {@link retryWhenBusySync} for the asynchronous methods: the backoff yields to the event loop. */
export async function retryWhenBusy<T>(
  operation: () => T,
  retryMs: number,
  what: 'write' | 'read',
  location: string,
): Promise<T> {
  const started = performance.now();
  for (let attempt = 0; ; attempt += 1) {
    try {
      return operation();
    } catch (error) {
      if (!isBusy(error)) throw error;
      const waited = performance.now() - started;
      if (waited >= retryMs) throw giveUp(error, what, location, waited);
      await new Promise((resolve) => setTimeout(resolve, Math.min(backoffMs(attempt), retryMs - waited)));
    }
  }
}
