import type pg from 'pg';
import { SocketClosingClient } from '../socket-closing-client.js';

/** An error the server answered a statement of the provider with (one `ERROR:` line in its log). */
export interface ServerError {
  /** The SQLSTATE (`23505` for a duplicate key). */
  code: string;
  message: string;
  /** The text of the statement it failed. */
  statement: string;
}

/** A statement one of the provider's connections sent. */
export interface SentStatement {
  text: string;
  values: readonly unknown[];
}

/** What {@link recordServerErrors} records, until `restore()`. */
export interface ServerRecording {
  /** Every statement sent, in order. */
  statements: SentStatement[];
  /** Every error the server answered one of them with. */
  errors: ServerError[];
  restore(): void;
}

/**
 * Records every statement the provider's connections send and every error the server answers one
 * with, until `restore()`. The server logs each of these errors as an `ERROR:` line (and aborts the
 * statement), so an empty list is what an operator watching the log sees; unlike the log, it holds
 * only what these connections were told, not what parallel tests on the same server did, and it
 * works against a server the tests did not start (`CREWLINE_TEST_POSTGRES_URL`). Errors a
 * server-side function catches itself never reach the client and are not logged either.
 *
 * `before`, when given, runs (and is waited for) before each statement is sent: a test makes
 * something happen elsewhere at that exact point.
 */
export function recordServerErrors(
  before?: (statement: SentStatement) => Promise<void> | undefined,
): ServerRecording {
  const prototype = SocketClosingClient.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = prototype.query;
  const statements: SentStatement[] = [];
  const errors: ServerError[] = [];
  const send = (client: pg.Client, args: unknown[], statement: SentStatement): unknown => {
    const result = original.apply(client, args);
    if (result instanceof Promise) {
      result.catch((error: unknown) => {
        // Only what the server answered: a lost connection or a client-side failure has no SQLSTATE
        // and no server log line.
        const code = (error as { code?: unknown }).code;
        if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code))
          errors.push({ code, message: (error as Error).message, statement: statement.text });
      });
    }
    return result;
  };
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string; values?: unknown[] };
    const statement: SentStatement =
      typeof first === 'string'
        ? { text: first, values: Array.isArray(args[1]) ? args[1] : [] }
        : { text: first?.text ?? '', values: first?.values ?? [] };
    statements.push(statement);
    const waited = before?.(statement);
    return waited === undefined
      ? send(this, args, statement)
      : waited.then(() => send(this, args, statement));
  };
  return {
    statements,
    errors,
    restore() {
      prototype.query = original;
    },
  };
}
