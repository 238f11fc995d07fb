/**
 * Where a run is. `queued` includes a run handed back or waiting out a retry's back-off; `paused`:
 * a flow asked a person (`ask()`) and waits, holding no worker, for `queue.resume(id, { humanInput })`.
 */
export type RunStatus = 'queued' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled';

export const runStatuses: readonly RunStatus[] = [
  'queued',
  'running',
  'paused',
  'completed',
  'failed',
  'cancelled',
];

/** What a paused flow asked (its `ask()`), as the run's row keeps it. */
export interface RunQuestion {
  /** The flow method that asked. */
  methodName: string;
  message: string;
  kind: 'feedback' | 'input';
}

/** What a registered name builds. */
export type RunKind = 'crew' | 'flow';

/** Tokens a run's model calls used so far, over every attempt's checkpointed and live calls. */
export interface RunTokens {
  input: number;
  output: number;
  total: number;
}

/**
 * A queued run a worker handed back, untouched, because it registers no crew or flow under the
 * run's name (a worker of an older deploy, or one that runs other crews): the run waits for a
 * worker that registers it. Cleared when a worker takes the run.
 */
export interface RunPassedOver {
  /** The worker that handed it back last (`worker <id> on <host>, pid N`). */
  worker: string;
  /** The names that worker registers. */
  registered: string[];
  /** When it did (server clock). */
  at: Date;
  /** How many times workers handed the run back since a worker last took it. */
  times: number;
}

/** One run of the queue, as its row in `<schema>.worker_runs` holds it. */
export interface RunRecord {
  id: string;
  /** The registered crew or flow. */
  name: string;
  inputs: Record<string, unknown>;
  idempotencyKey: string | null;
  /** Higher runs first. */
  priority: number;
  /** Each attempt is stopped and the run failed after this long; `null`: no limit. */
  timeoutMs: number | null;
  /** Failed attempts (not hand-backs) after which the run fails. */
  maxAttempts: number;
  status: RunStatus;
  /** Attempts started (a hand-back on SIGTERM and a takeover after a crash each start one more). */
  attempts: number;
  /** Attempts that failed for a reason worth retrying. */
  failures: number;
  /** The worker holding the run (`host, pid N, worker <id>`), while it runs. */
  worker: string | null;
  /** When the holder's hold runs out unless renewed (server clock). */
  leaseExpiresAt: Date | null;
  /** The run's checkpoint lineage, once its first attempt has started writing. */
  lineageId: string | null;
  /** Reference of the newest checkpoint the run wrote (`postgres-url#id`, no password). */
  lastCheckpoint: string | null;
  /** The task or flow method being worked on. */
  currentTask: string | null;
  tokens: RunTokens;
  /** The final output as text (completed runs). */
  output: string | null;
  /** Why the run failed or was cancelled, one line; on a run that went on, why its last retried attempt failed. */
  error: string | null;
  /** The crewline error code of that reason, when it had one. */
  errorCode: string | null;
  /** The question of the run's latest pause (a flow's `ask()`); kept once answered. */
  question: RunQuestion | null;
  /** The answer given to that question with `queue.resume`; `null` while it waits. */
  humanInput: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /**
   * The pg-boss job that currently delivers the run (a new one per attempt); `null` once a worker
   * took a passed-over run by name (its job withdrawn) and for a paused run.
   */
  jobId: string | null;
  /** For a run made by `queue.fork`: the run it forks. */
  forkOf: string | null;
  /** For a run made by `queue.fork`: the checkpoint it branches off (the forked run's last, or a flow's `rerunFrom` point), its lineage's parent. */
  forkFrom: string | null;
  /** For a run made by `queue.fork`: flat task index → the edited output it starts with. */
  taskOutputs: Record<string, string> | null;
  /** A queued run that waits for a worker that registers its name: which worker passed it over. */
  passedOver: RunPassedOver | null;
}

export interface RunRow {
  id: string;
  name: string;
  inputs: Record<string, unknown>;
  idempotency_key: string | null;
  priority: number;
  timeout_ms: number | null;
  max_attempts: number;
  status: RunStatus;
  attempts: number;
  failures: number;
  worker: string | null;
  holder_token: string | null;
  lease_expires_at: Date | null;
  lineage_id: string | null;
  last_checkpoint: string | null;
  current_task: string | null;
  input_tokens: string | number;
  output_tokens: string | number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  output: string | null;
  error: string | null;
  error_code: string | null;
  job_id: string | null;
  fork_of: string | null;
  fork_from: string | null;
  task_outputs: Record<string, string> | null;
  /** For a flow's fork with `rerunFrom`: that method (its executions start from scratch). */
  rerun_from: string | null;
  question: string | null;
  question_method: string | null;
  question_kind: string | null;
  human_input: string | null;
  pause_checkpoint: string | null;
  passed_over?: { worker: string; registered: string[]; at: string; times: number } | null;
}

export function recordOf(row: RunRow): RunRecord {
  const input = Number(row.input_tokens);
  const output = Number(row.output_tokens);
  return {
    id: row.id,
    name: row.name,
    inputs: row.inputs,
    idempotencyKey: row.idempotency_key,
    priority: row.priority,
    timeoutMs: row.timeout_ms,
    maxAttempts: row.max_attempts,
    status: row.status,
    attempts: row.attempts,
    failures: row.failures,
    worker: row.worker,
    leaseExpiresAt: row.lease_expires_at,
    lineageId: row.lineage_id,
    lastCheckpoint: row.last_checkpoint,
    currentTask: row.current_task,
    tokens: { input, output, total: input + output },
    output: row.output,
    error: row.error,
    errorCode: row.error_code,
    question:
      row.question === null
        ? null
        : {
            methodName: row.question_method ?? '',
            message: row.question,
            kind: row.question_kind === 'input' ? 'input' : 'feedback',
          },
    humanInput: row.human_input,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    jobId: row.job_id,
    forkOf: row.fork_of ?? null,
    forkFrom: row.fork_from ?? null,
    taskOutputs: row.task_outputs ?? null,
    passedOver: row.passed_over ? { ...row.passed_over, at: new Date(row.passed_over.at) } : null,
  };
}
