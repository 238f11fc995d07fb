/**
 * The variants of the run-overhead bench: no checkpointing, or '*' on one provider: SQLite as
 * configured by default (a commit per checkpoint, `synchronous: 'normal'`), with `groupCommit`, and
 * both with `synchronous: 'full'`; JSON.
 */
export type OverheadVariant =
  | 'none'
  | 'sqlite'
  | 'sqlite-groups'
  | 'sqlite-full'
  | 'sqlite-full-groups'
  | 'json';

/** What one cold run (overhead-child.ts) reports. */
export interface OverheadSample {
  variant: OverheadVariant;
  /** Wall time of the kickoff, until every checkpoint is written. */
  kickoffMs: number;
  /** CPU time of the process during the kickoff (main thread and thread pool, user and system). */
  cpuMs: number;
  checkpoints: number;
  events: number;
  modelCalls: number;
  /** Time the run's thread spent in its automatic checkpoints (writeCheckpoint/writeCheckpointSync). */
  buildingMs: number;
  /** Time the run waited in `state.durable()` (the barrier before model and tool calls). */
  barrierWaitMs: number;
  /** JSON: bytes of all the checkpoint files the run wrote. */
  fileBytes?: number;
}
