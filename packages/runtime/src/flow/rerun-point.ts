import { flowError } from './errors.js';
import type { FlowGraph } from './flow-graph.js';
import type { FlowExecution } from './run-progress.js';

export interface FindRerunCheckpointOptions {
  /**
   * The history is one lineage, where completed methods only grow: every save older than one without
   * the method lacks it too, so they are not asked about. Default `false` (a flow state's saves span
   * branches: a re-run's saves lack the method after older ones that hold it).
   */
  oneLineage?: boolean;
}

/**
 * The save to continue from so that `method` and everything after it run again while the methods
 * before it are restored, not re-run: among `history` (oldest first) the saves where `method` had not
 * completed, the newest one written as a method completed, else the newest (one written while
 * `method` itself was running would continue inside it). `hasCompleted` is asked newest first and only
 * where the answer can change the pick, so a caller that reads each save to answer reads few.
 * `undefined` when every save holds `method` completed. The one rule of `findRerunPoint` and of the
 * worker's forks.
 */
export async function findRerunCheckpoint<Save extends { trigger: string }>(
  history: readonly Save[],
  hasCompleted: (save: Save) => boolean | Promise<boolean>,
  options: FindRerunCheckpointOptions = {},
): Promise<Save | undefined> {
  let newest: Save | undefined;
  for (let index = history.length - 1; index >= 0; index -= 1) {
    const save = history[index]!;
    const finished = save.trigger === 'method_execution_finished';
    // Past the newest save without the method, only one written as a method completed can be picked.
    if (newest !== undefined && !finished) continue;
    if ((newest === undefined || options.oneLineage !== true) && (await hasCompleted(save))) continue;
    if (finished) return save;
    newest = save;
  }
  return newest;
}

/**
 * Prepares a restored execution for a re-run of `method`: its executions due to run start from
 * scratch. The save a re-run continues can be one taken while `method` ran beside another method
 * (written as that one completed), where its executions list the crews they had started: those lists
 * are emptied, and the ids they held returned, for the run to forget that saved work (crews the
 * other executions started, or the completed methods ran, are kept).
 */
export function forgetStartedWork(execution: FlowExecution, method: string): string[] {
  const forgotten: string[] = [];
  for (const activation of execution.pending) {
    if (activation.method !== method) continue;
    forgotten.push(...activation.started.flatMap((entity) => entity.id ?? []));
    activation.started = [];
  }
  return forgotten;
}

/**
 * Refuses a re-run of `method` from a checkpoint where it cannot happen, before anything runs: a
 * method the flow does not have (a typo), or one the checkpoint holds completed and not due again
 * (a save taken after it): the continuation would go on from there, the method not run again, and
 * pay for what follows on the old route.
 */
export function checkRerunPoint(
  graph: FlowGraph,
  execution: FlowExecution,
  method: string,
  where: { flowName: string; checkpointId: string },
): void {
  if (!graph.nodes.has(method)) {
    throw flowError(
      'invalid_argument',
      `rerunFrom ${JSON.stringify(method)} is not a method of flow "${where.flowName}"; its methods are ${[...graph.nodes.keys()].join(', ')}`,
    );
  }
  const due = execution.pending.some((activation) => activation.method === method);
  if (execution.completedMethods.includes(method) && !due) {
    throw flowError(
      'invalid_argument',
      `rerunFrom "${method}": checkpoint ${where.checkpointId} was saved after "${method}" completed, so continuing it would not run "${method}" again; continue the save before it instead (findRerunPoint(location, stateId, "${method}") finds it; kickoff({ inputs: { id }, rerunFrom: "${method}" }) re-runs a persisted state from it in one call)`,
      { details: { rerunFrom: method, checkpointId: where.checkpointId } },
    );
  }
}
