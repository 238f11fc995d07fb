import {
  type CheckpointProvider,
  type ModelPrices,
  type RunCost,
  readDocument,
  runCost,
} from '@crewline/runtime-state';
import { lineageOrder } from './lineage-order.js';
import type { RunRecord, RunStatus, RunTokens } from './run-record.js';

/**
 * How far a run got, read from its checkpoints: what a worker killed at any moment cannot lose,
 * unlike the counts its row gets at each renewal. Any process that reaches the queue's server reads
 * it, so a dashboard or the CLI follows a run it did not start.
 */
export interface RunProgress {
  runId: string;
  status: RunStatus;
  /** The run's checkpoint lineage; `null` before its first attempt wrote one. */
  lineageId: string | null;
  /** Checkpoints the run's lineage holds. */
  checkpoints: number;
  /** Reference of the newest of them (`postgres-url#id`, no password). */
  lastCheckpoint: string | null;
  /** The task or flow method the newest checkpoint was working on (or last worked on). */
  currentTask: string | null;
  /** Model calls whose completion a checkpoint holds (over every attempt of the run). */
  modelCalls: number;
  /** Their tokens. Model calls whose completion no checkpoint reached are not counted. */
  tokens: RunTokens;
  /**
   * What those calls cost, per model, at the queue's `modelPrices`: US dollars where every model is
   * priced (the offline model costs 0), `unknown` with the tokens where one is not.
   */
  cost: RunCost;
}

/** Reads `run`'s progress from the newest checkpoint of its lineage in `location`, priced at `prices`. */
export async function readRunProgress(
  provider: CheckpointProvider,
  location: string,
  run: RunRecord,
  prices: ModelPrices = {},
): Promise<RunProgress> {
  const progress: RunProgress = {
    runId: run.id,
    status: run.status,
    lineageId: run.lineageId,
    checkpoints: 0,
    lastCheckpoint: null,
    currentTask: null,
    modelCalls: 0,
    tokens: { input: 0, output: 0, total: 0 },
    cost: runCost([], prices),
  };
  if (run.lineageId === null) return progress;
  const listed = await provider.list(location, { lineageId: run.lineageId });
  const newest = lineageOrder(listed).at(-1);
  if (newest === undefined) return progress;
  const document = await readDocument(provider, location, newest.id);
  progress.checkpoints = listed.length;
  progress.lastCheckpoint = newest.reference;
  for (const event of document.events) {
    if (event.type === 'task_started') {
      progress.currentTask = String(event.description ?? event.context?.taskName ?? '');
    } else if (event.type === 'method_execution_started') {
      progress.currentTask = String(event.methodName ?? '');
    }
  }
  // Calls and tokens are the cost's own counts, so the totals and the per-model lines always agree.
  progress.cost = runCost(document.events, prices);
  for (const model of progress.cost.models) {
    progress.modelCalls += model.calls;
    progress.tokens.input += model.tokens.input;
    progress.tokens.output += model.tokens.output;
  }
  progress.tokens.total = progress.tokens.input + progress.tokens.output;
  return progress;
}
