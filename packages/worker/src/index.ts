// The public surface of @crewline/worker.

export type { ResumeRunOptions } from './paused-runs.js';
export type { ForkRunOptions } from './run-fork.js';
export type { ForkPointUsage, RunProgress } from './run-progress.js';
export {
  type EnqueueOptions,
  type EnqueueResult,
  type ListRunsOptions,
  RunQueue,
  type RunQueueOptions,
} from './run-queue.js';
export type { RunKind, RunQuestion, RunRecord, RunStatus, RunTokens } from './run-record.js';
export { runStatuses } from './run-record.js';
export {
  type CrewFactory,
  defineRuns,
  type FlowFactory,
  type RegisteredRun,
  type RunContext,
  type RunDefinitions,
  RunRegistry,
} from './run-registry.js';
export { type StopOnSignalOptions, Worker } from './worker.js';
export type { HoldChange, WorkerOptions } from './worker-options.js';
