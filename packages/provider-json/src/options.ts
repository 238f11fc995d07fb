import { DEFAULT_MAX_CHECKPOINT_BYTES, formatIssues } from '@crewline/runtime-state';
import { z } from 'zod';
import { jsonError } from './errors.js';

/** Options of `new JsonProvider(options)`. */
export interface JsonProviderOptions {
  /**
   * Largest checkpoint, in bytes, this provider writes or reads. A bigger checkpoint is refused with
   * a `too_large` error instead of being loaded into memory. Default 128 MiB
   * (`DEFAULT_MAX_CHECKPOINT_BYTES`).
   */
  maxCheckpointBytes?: number;
  /**
   * Flush every checkpoint file and its directory to disk (`fsync`) before a write reports success.
   * Turning it off keeps writes atomic (a reader still never sees a partial file) but a power loss
   * can lose the most recent checkpoints. Default `true`.
   */
  fsync?: boolean;
  /** Permission bits of checkpoint files (checkpoints hold run data). Default `0o600`. */
  fileMode?: number;
  /** Permission bits of the directories the provider creates. Default `0o700`. */
  directoryMode?: number;
}

export interface ResolvedJsonProviderOptions {
  maxCheckpointBytes: number;
  fsync: boolean;
  fileMode: number;
  directoryMode: number;
}

const modeSchema = z
  .number()
  .int('must be a whole number')
  .min(0, 'must be at least 0')
  .max(0o777, 'must be at most 0o777');

const optionsSchema = z.strictObject({
  maxCheckpointBytes: z
    .number()
    .int('must be a whole number of bytes')
    .positive('must be at least 1')
    .optional(),
  fsync: z.boolean('must be true or false').optional(),
  fileMode: modeSchema.optional(),
  directoryMode: modeSchema.optional(),
});

/** Validates `JsonProvider` options and applies defaults; an unknown or wrong option is a typed error naming it. */
export function parseJsonProviderOptions(input: unknown): ResolvedJsonProviderOptions {
  const value = input === undefined ? {} : input;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw jsonError(
      'invalid_config',
      'JsonProvider options must be an object, e.g. new JsonProvider({ fsync: true })',
    );
  }
  const result = optionsSchema.safeParse(value);
  if (!result.success) {
    throw jsonError('invalid_config', `invalid JsonProvider options: ${formatIssues(result.error.issues)}`);
  }
  return {
    maxCheckpointBytes: result.data.maxCheckpointBytes ?? DEFAULT_MAX_CHECKPOINT_BYTES,
    fsync: result.data.fsync ?? true,
    fileMode: result.data.fileMode ?? 0o600,
    directoryMode: result.data.directoryMode ?? 0o700,
  };
}
