import type pg from 'pg';
import { SocketClosingClient, socketOf } from '../socket-closing-client.js';

/** Closes `client`'s socket and fails as a connection lost before the answer came back. */
export function connectionLost(client: pg.Client): never {
  socketOf(client)?.destroy();
  throw new Error('Connection terminated unexpectedly');
}

/**
 * Hands the next statement calling `crewline_write` (a write or a group) to `instead`, which gets
 * the client and the statement sent as usual; every other statement, and the ones after, go as
 * usual. `restore()` puts the client's `query` back.
 */
export function interceptNextWrite(
  instead: (client: pg.Client, send: () => Promise<unknown>) => Promise<unknown>,
): { restore(): void } {
  const prototype = SocketClosingClient.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  let armed = true;
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    const text = typeof first === 'string' ? first : (first?.text ?? '');
    if (!armed || !text.includes('crewline_write')) return original.apply(this, args);
    armed = false;
    return instead(this, () => original.apply(this, args) as Promise<unknown>);
  };
  return {
    restore() {
      prototype.query = original;
    },
  };
}
