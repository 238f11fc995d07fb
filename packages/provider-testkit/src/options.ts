import type { CheckpointProvider } from '@crewline/runtime-state';

/**
 * How the `corrupt` hook damages one stored checkpoint:
 * - `truncate`: cut the stored text (or payload) roughly in half, as a torn write would;
 * - `garbage`: replace the stored bytes with bytes that are not JSON;
 * - `newer-version`: set `formatVersion` to a version newer than this crewline understands (999);
 * - `proto`: add a raw `"__proto__": { "polluted": "yes" }` member inside the stored `metadata` object
 *   (or the document, when metadata is stored apart).
 */
export type CorruptionMode = 'truncate' | 'garbage' | 'newer-version' | 'proto';

export type MaybePromise<T> = T | Promise<T>;

/** Runs writer processes against one location for the multi-process concurrency test. */
export interface ConcurrentWriters {
  /**
   * Starts `count` processes that each write `perWriter` checkpoints to `location` (typically with
   * `writeCheckpointsAsWriter` from `@crewline/provider-testkit/fixtures`) and resolves when all
   * have exited successfully; rejects when one fails.
   */
  spawn(location: string, count: number, perWriter: number): Promise<void>;
}

/** Options of {@link describeCheckpointProvider}. */
export interface ProviderTestkitOptions {
  /** Name shown in the test report, e.g. `'JsonProvider'`. */
  name: string;
  /** A fresh provider instance. Called once or more per test; every instance is `close()`d after it. */
  createProvider: () => MaybePromise<CheckpointProvider>;
  /** A fresh, empty location per call (a temp directory, a database path, a connection string...). */
  createLocation: () => MaybePromise<string>;
  /** Removes a location made by `createLocation`, after each test. Default: nothing is removed. */
  removeLocation?: (location: string) => MaybePromise<void>;
  /**
   * Damages the stored checkpoint `id` at `location` in the given way. Without it the
   * corrupt-storage tests are skipped (reported as skipped, with the reason in their name).
   */
  corrupt?: (location: string, id: string, mode: CorruptionMode) => MaybePromise<void>;
  /**
   * A provider that refuses checkpoints larger than `maxCheckpointBytes` (its size cap). Without it
   * the provider-level oversize tests are skipped; the core's own size check is tested either way.
   */
  createLimitedProvider?: (maxCheckpointBytes: number) => MaybePromise<CheckpointProvider>;
  /** Multi-process writers. Without it the multi-process test is skipped. */
  concurrentWriters?: ConcurrentWriters;
  /**
   * Whether a second provider instance opened on the same location sees what the first wrote
   * (true for anything that stores outside the process). Default `true`; `InMemoryProvider` passes
   * `false`.
   */
  persistent?: boolean;
  /** Concurrent async writes in the one-process concurrency test. Default `40`. */
  concurrentWrites?: number;
  /** Writer processes and checkpoints per writer in the multi-process test. Default `{ writers: 4, perWriter: 15 }`. */
  processWriters?: { writers: number; perWriter: number };
}
