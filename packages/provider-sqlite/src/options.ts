import { DEFAULT_MAX_CHECKPOINT_BYTES } from '@crewline/runtime-state';
import { invalidOptions } from '@crewline/runtime-state/internal';
import { z } from 'zod';
import { component } from './errors.js';

/** Options of `new SqliteProvider(options)`. */
export interface SqliteProviderOptions {
  /**
   * How hard each commit waits for the disk. Default `'normal'`.
   * - `'normal'`: the write-ahead log is synced at every WAL checkpoint, not at every commit. A
   *   crashed or killed process loses nothing that was committed; only an operating-system crash
   *   or power loss may roll the database back to an earlier (consistent) checkpoint.
   * - `'full'`: every commit is fsync'd before `write` returns (about 0.15 ms on a fast SSD, 1–10 ms
   *   on many laptops), so even a power loss keeps every acknowledged checkpoint.
   */
  synchronous?: 'normal' | 'full';
  /**
   * How long SQLite itself waits for another connection's lock before reporting the database busy
   * (`PRAGMA busy_timeout`), in milliseconds. Default `5000`.
   */
  busyTimeoutMs?: number;
  /**
   * After SQLite's own wait (`busyTimeoutMs`) runs out, how much longer the provider keeps retrying
   * with backoff before it gives up with a `write_failed`/`read_failed` error, in milliseconds.
   * `SQLITE_BUSY` itself never reaches the caller. Default `60000`.
   */
  busyRetryMs?: number;
  /**
   * Largest checkpoint (its full document text, in bytes) this provider writes or reads back; larger
   * ones are refused with a `too_large` error. Default `134217728` (128 MiB, the core's own limit).
   */
  maxCheckpointBytes?: number;
  /**
   * Commit a run's automatic checkpoints in groups: the checkpoints of the events a run emits between
   * two of its model or tool calls go into one transaction, at the end of the event loop's turn or
   * before the run's next model or tool call, whichever comes first (each checkpoint keeps its own id,
   * row and parent; a model completion is committed inside its event). A kill can lose the newest
   * group: a tool's result in it makes the resumed run call that tool again. Off by default: every
   * automatic checkpoint is committed inside its event, as `state.checkpoint()` always is, which was
   * as fast or faster in the run-overhead bench with `synchronous: 'normal'` (one commit writes no
   * fsync there); with `synchronous: 'full'` groups share the fsync and cut a cold run's overhead
   * (bench/results/run-overhead.md). Default `false`.
   */
  groupCommit?: boolean;
}

/** {@link SqliteProviderOptions} with defaults applied. */
export interface ResolvedSqliteProviderOptions {
  synchronous: 'normal' | 'full';
  busyTimeoutMs: number;
  busyRetryMs: number;
  maxCheckpointBytes: number;
  groupCommit: boolean;
}

const optionsSchema = z.strictObject({
  synchronous: z.enum(['normal', 'full']).optional(),
  busyTimeoutMs: z.number().int('must be a whole number of milliseconds').min(0).max(3_600_000).optional(),
  busyRetryMs: z.number().int('must be a whole number of milliseconds').min(0).max(86_400_000).optional(),
  maxCheckpointBytes: z.number().int('must be a whole number of bytes').positive().optional(),
  groupCommit: z.boolean().optional(),
});

/** Validates provider options and applies defaults; an unknown or bad option is an `invalid_config` error. */
export function parseSqliteProviderOptions(input: unknown = {}): ResolvedSqliteProviderOptions {
  const result = optionsSchema.safeParse(input ?? {});
  if (!result.success) {
    throw invalidOptions(
      component,
      'SqliteProvider',
      result.error.issues,
      'the options are synchronous, busyTimeoutMs, busyRetryMs, maxCheckpointBytes and groupCommit',
    );
  }
  const options = result.data;
  return {
    synchronous: options.synchronous ?? 'normal',
    busyTimeoutMs: options.busyTimeoutMs ?? 5000,
    busyRetryMs: options.busyRetryMs ?? 60_000,
    maxCheckpointBytes: options.maxCheckpointBytes ?? DEFAULT_MAX_CHECKPOINT_BYTES,
    groupCommit: options.groupCommit ?? false,
  };
}
