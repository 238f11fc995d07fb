import type { CheckpointEventType } from '@crewline/events';
import type { CheckpointProvider } from '@crewline/runtime-state';
import { workerError } from './errors.js';
import type { RunDefinitions, RunRegistry } from './run-registry.js';

export interface WorkerOptions {
  /** `postgres://user@host:5432/database` (`?schema=` optional; the password from PGPASSWORD or the URL). */
  location: string;
  /** Schema of the runs table and the checkpoints when the URL names none. Default `'crewline'`. */
  schema?: string;
  /** What runs this worker can execute, by name. */
  runs: RunRegistry | RunDefinitions;
  /** Runs executed at once. Default `1`. */
  concurrency?: number;
  /**
   * How long this worker's hold on a run (and on the run's lineage head) lasts without renewal; a
   * vanished worker's run is retried once it runs out. Renewed every third of it. Default `20000`.
   */
  leaseTtlMs?: number;
  /**
   * How often an idle slot asks for a run when no enqueue or hand-back woke it (the worker LISTENs
   * for new runs; behind a pooler in transaction mode only this poll finds them, and a run another
   * worker passed over for want of its name waits at most this long for an idle worker that
   * registers it), and how often the runs being
   * executed are checked for a cancel (a cancelled run stops within about this long). Default `500`.
   */
  pollIntervalMs?: number;
  /** Checkpoint triggers of the runs. Default `'*'` (every event: no completed model call is paid twice). */
  checkpointOn?: readonly CheckpointEventType[] | '*';
  /**
   * The first retry waits this many milliseconds (±20 %), each next one twice as long; honoured to
   * the millisecond on the server's clock (a retry is then taken at the next poll). Default `1000`.
   */
  retryDelayMs?: number;
  /** Longest wait before a retry, in milliseconds, jitter included. Default `60000`. */
  maxRetryDelayMs?: number;
  /** The provider runs checkpoint through. Default: a `PostgresProvider` of this worker's own. */
  provider?: CheckpointProvider;
  /** Told of every hold this worker takes and gives up (for logs and tests). Default: none. */
  onHold?: (change: HoldChange) => void;
}

/** A hold on a run this worker took or gave up. */
export interface HoldChange {
  runId: string;
  change: 'claimed' | 'released';
  /** For `released`: how the attempt ended. */
  outcome?: 'completed' | 'paused' | 'failed' | 'retry' | 'handed-back' | 'cancelled' | 'lost';
  attempt: number;
  at: number;
}

/** The numbers of {@link WorkerOptions}, checked, with their defaults. */
export interface WorkerTimings {
  concurrency: number;
  leaseTtlMs: number;
  pollIntervalMs: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
}

export function workerTimings(options: WorkerOptions): WorkerTimings {
  const leaseTtlMs = positiveInteger(options.leaseTtlMs ?? 20_000, 'leaseTtlMs');
  if (leaseTtlMs < 300) {
    throw workerError(
      'invalid_config',
      `Worker option leaseTtlMs must be at least 300 (it is renewed every third of it), got ${leaseTtlMs}`,
    );
  }
  return {
    concurrency: positiveInteger(options.concurrency ?? 1, 'concurrency'),
    leaseTtlMs,
    pollIntervalMs: positiveInteger(options.pollIntervalMs ?? 500, 'pollIntervalMs'),
    retryDelayMs: positiveInteger(options.retryDelayMs ?? 1000, 'retryDelayMs'),
    maxRetryDelayMs: positiveInteger(options.maxRetryDelayMs ?? 60_000, 'maxRetryDelayMs'),
  };
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw workerError(
      'invalid_config',
      `Worker option ${name} must be a whole number of at least 1, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}
