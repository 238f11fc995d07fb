import type pg from 'pg';
import { SocketClosingClient } from '../socket-closing-client.js';

/** An error the server answered a statement of the provider with (one `ERROR:` line in its log). */
export interface ServerError {
  /** The SQLSTATE (`23505` for a duplicate key). */
  code: string | undefined;
  message: string;
  /** The text of the statement it failed. */
  statement: string;
}

/**
 * Records every error the server answers a statement of the provider's connections with, until
 * `restore()`. The server logs each of these as an `ERROR:` line (and aborts the statement), so an
 * empty list is what an operator watching the log sees; unlike the log, it holds only what these
 * connections were told, not what parallel tests on the same server did, and it works against a
 * server the tests did not start (`CREWLINE_TEST_POSTGRES_URL`). Errors a server-side function
 * catches itself never reach the client and are not logged either.
 */
export function recordServerErrors(): { errors: ServerError[]; restore(): void } {
  const prototype = SocketClosingClient.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const errors: ServerError[] = [];
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const result = original.apply(this, args);
    if (result instanceof Promise) {
      const first = args[0] as string | { text?: string };
      const statement = typeof first === 'string' ? first : (first?.text ?? '');
      result.catch((error: unknown) => {
        // Only what the server answered: a lost connection or a client-side failure has no SQLSTATE
        // and no server log line.
        const code = (error as { code?: unknown }).code;
        if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code))
          errors.push({ code, message: (error as Error).message, statement });
      });
    }
    return result;
  };
  return {
    errors,
    restore() {
      prototype.query = original;
    },
  };
}
