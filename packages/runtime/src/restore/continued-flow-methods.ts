import type { CheckpointDocument } from '@crewline/runtime-state';
import { parseFlowData } from '@crewline/runtime-state/internal';

/** What a continuation of a flow's checkpoint does with the flow's methods. */
export interface ContinuedFlowMethods {
  /**
   * Methods that completed: restored with their outputs and the state they left, not run again for
   * the completion they had (a listener that fires again later runs again), nor their crews' tasks.
   */
  completed: string[];
  /**
   * Methods due (queued, or stopped part-way): each runs from its start, its crews taking up the
   * work they saved, and the methods that listen to it run after it.
   */
  due: string[];
  /** Methods paused on a question (`ask()`): they run again only with the answer (`humanInput`). */
  paused: string[];
}

/**
 * The methods a continuation of `document` restores and runs, as the flow's scheduler takes them up
 * (its saved executions: completed ones are restored, due ones run, paused ones wait for an answer).
 * `undefined` when the checkpoint is not a flow's.
 */
export function continuedFlowMethods(document: CheckpointDocument): ContinuedFlowMethods | undefined {
  const root = document.entities[0];
  if (root?.kind !== 'flow') return undefined;
  const { execution } = parseFlowData(root);
  const methods = (paused: boolean) => [
    ...new Set(
      execution.pending
        .filter((activation) => (activation.pause !== null) === paused)
        .map((activation) => activation.method),
    ),
  ];
  return { completed: [...execution.completedMethods], due: methods(false), paused: methods(true) };
}
