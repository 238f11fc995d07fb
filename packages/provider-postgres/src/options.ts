import { DEFAULT_MAX_CHECKPOINT_BYTES } from '@crewline/runtime-state';
import { invalidOptions } from '@crewline/runtime-state/internal';
import { z } from 'zod';
import { component } from './errors.js';
import { checkSchemaName, DEFAULT_SCHEMA } from './location.js';

/** Options of `new PostgresProvider(options)`. */
export interface PostgresProviderOptions {
  /**
   * Schema that holds crewline's tables when the location names none (`?schema=` in the URL wins).
   * Letters, digits and `_`. Default `'crewline'`.
   */
  schema?: string;
  /** Most connections one provider opens to one server (a `pg.Pool`'s `max`). Default `10`. */
  poolSize?: number;
  /** How long to wait for a connection before failing, in milliseconds. Default `10000`. */
  connectionTimeoutMs?: number;
  /**
   * How long the server may stay silent on a query of this provider, in milliseconds: not how long
   * the query may take. Each byte that arrives starts it again (a large checkpoint over a slow link
   * is never cut); when it passes in silence, a check on a new, short-lived connection (at most 5 s)
   * asks the server whether it is there and still runs the query's session, and if so the query is
   * waited for (it waits for a lock, say behind a long prune, garbage collection or layout upgrade in
   * another process). Only when the check gets no answer either (or finds the session gone) does the
   * query fail with `write_failed` or `read_failed` (`details.timedOut`), and its connection is
   * closed. Default `30000`; `?query_timeout_ms=` in the location wins (the way to set it from the
   * CLI or a worker).
   *
   * Without it, a network that silently drops packets (no reset: a proxy or firewall that stops
   * forwarding, a host that froze) leaves a query waiting forever, and with it the checkpoint a run
   * writes on Ctrl+C: the process would not end. Lease queries also keep their own limits on how
   * long they may take (a quarter of the lease, see the README). A write that was given up on may
   * still be stored: the server can finish it after the provider stopped waiting.
   */
  queryTimeoutMs?: number;
  /**
   * Whether a write waits until the server has flushed its commit to disk (Postgres's
   * `synchronous_commit`). Default `'on'`. `'off'` makes a write about one disk flush faster; a
   * crash of the *server* may then lose the last fraction of a second of checkpoints (never corrupt
   * them), a crash of the writing process loses nothing either way.
   */
  synchronousCommit?: 'on' | 'off';
  /**
   * Largest checkpoint (its full document text, in bytes) this provider writes or reads back; larger
   * ones are refused with a `too_large` error. Default `134217728` (128 MiB, the core's own limit).
   */
  maxCheckpointBytes?: number;
  /** `application_name` the connections report (visible in `pg_stat_activity`). Default `'crewline'`. */
  applicationName?: string;
}

/** {@link PostgresProviderOptions} with defaults applied. */
export interface ResolvedPostgresProviderOptions {
  schema: string;
  poolSize: number;
  connectionTimeoutMs: number;
  queryTimeoutMs: number;
  synchronousCommit: 'on' | 'off';
  maxCheckpointBytes: number;
  applicationName: string;
}

const optionsSchema = z.strictObject({
  schema: z.string().optional(),
  poolSize: z.number().int('must be a whole number').min(1).max(1000).optional(),
  connectionTimeoutMs: z
    .number()
    .int('must be a whole number of milliseconds')
    .min(1)
    .max(3_600_000)
    .optional(),
  queryTimeoutMs: z.number().int('must be a whole number of milliseconds').min(1).max(86_400_000).optional(),
  synchronousCommit: z.enum(['on', 'off']).optional(),
  maxCheckpointBytes: z.number().int('must be a whole number of bytes').positive().optional(),
  applicationName: z
    .string()
    .max(63)
    .regex(/^[\x20-\x7e]*$/, 'must be printable ASCII')
    .optional(),
});

const optionNames = Object.keys(optionsSchema.shape).join(', ');

/** Validates provider options and applies defaults; an unknown or bad option is an `invalid_config` error. */
export function parsePostgresProviderOptions(input: unknown = {}): ResolvedPostgresProviderOptions {
  const result = optionsSchema.safeParse(input ?? {});
  if (!result.success) {
    throw invalidOptions(
      component,
      'PostgresProvider',
      result.error.issues,
      `the options are ${optionNames} (put the connection string in the checkpoint location)`,
    );
  }
  const options = result.data;
  return {
    schema: checkSchemaName(options.schema ?? DEFAULT_SCHEMA, 'PostgresProvider option schema'),
    poolSize: options.poolSize ?? 10,
    connectionTimeoutMs: options.connectionTimeoutMs ?? 10_000,
    queryTimeoutMs: options.queryTimeoutMs ?? 30_000,
    synchronousCommit: options.synchronousCommit ?? 'on',
    maxCheckpointBytes: options.maxCheckpointBytes ?? DEFAULT_MAX_CHECKPOINT_BYTES,
    applicationName: options.applicationName ?? 'crewline',
  };
}
