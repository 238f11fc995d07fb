import type { EventRecord } from '@crewline/events';
import {
  type CheckpointProvider,
  lineageCost,
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
  /**
   * Model calls this run made whose completion a checkpoint holds (over every attempt of the run). A
   * forked run's checkpoints carry the history of the run it was forked from; those calls are the
   * other run's, counted in {@link beforeFork}, not here, so summing runs counts every call once.
   */
  modelCalls: number;
  /** Their tokens. Model calls whose completion no checkpoint reached are not counted. */
  tokens: RunTokens;
  /**
   * What those calls cost, per model, at the queue's `modelPrices`: US dollars where every model is
   * priced (the offline model costs 0), `unknown` with the tokens where one is not.
   */
  cost: RunCost;
  /**
   * For a run made by `queue.fork`: what its fork point (the checkpoint it branches off) already
   * held — the calls of the run it was forked from, and of that run's own fork parents — so this run
   * plus this is the whole history its checkpoints carry. `null` for a run that is not a fork, or
   * whose fork point can no longer be read (pruned): then the counts above include that history.
   */
  beforeFork: ForkPointUsage | null;
}

/** The model calls a fork point's history holds, as {@link RunProgress.beforeFork} counts them. */
export interface ForkPointUsage {
  /** The run that was forked (`forkOf`). */
  runId: string | null;
  modelCalls: number;
  tokens: RunTokens;
  cost: RunCost;
}

/** Calls, tokens and `cost`, the counts added up from its per-model lines so that they agree. */
function usageOf(cost: RunCost) {
  const tokens: RunTokens = { input: 0, output: 0, total: 0 };
  let modelCalls = 0;
  for (const model of cost.models) {
    modelCalls += model.calls;
    tokens.input += model.tokens.input;
    tokens.output += model.tokens.output;
  }
  tokens.total = tokens.input + tokens.output;
  return { modelCalls, tokens, cost };
}

/** The events of a forked run's fork point, or `undefined` when it is not a fork or it cannot be read. */
async function forkPointEvents(
  provider: CheckpointProvider,
  location: string,
  run: RunRecord,
): Promise<readonly EventRecord[] | undefined> {
  if (!run.forkFrom) return undefined;
  const id = provider.parseReference(run.forkFrom)?.id;
  if (id === undefined) return undefined;
  try {
    return (await readDocument(provider, location, id)).events;
  } catch {
    // Pruned, or unreadable: the run's counts then include its history rather than failing `runs show`.
    return undefined;
  }
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
    beforeFork: null,
  };
  const inherited = await forkPointEvents(provider, location, run);
  if (inherited !== undefined)
    progress.beforeFork = { runId: run.forkOf, ...usageOf(runCost(inherited, prices)) };
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
  // A fork's checkpoints start with its fork point's history: those calls are not this run's.
  Object.assign(progress, usageOf(lineageCost(document.events, inherited, prices).own));
  return progress;
}
