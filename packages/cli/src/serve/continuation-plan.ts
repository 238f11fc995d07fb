import { editTaskOutputsInDocument } from '@crewline/runtime-state/internal';
import { parseTaskOutputs } from '../commands/continue-command.js';
import { type DocumentView, viewDocument } from '../core/document-view.js';

/** A task a continuation would run, and why. */
export interface PlannedTask {
  /** Number as `info` and `--set-output` count. */
  number: number;
  name?: string;
  description: string;
  /**
   * `invalidated`: completed in the checkpoint, but an earlier output was edited, so it runs again
   * against the new context. `unfinished`: never completed (pending, in progress or failed).
   */
  reason: 'invalidated' | 'unfinished';
}

export interface ContinuationPlan {
  /** Numbers of the tasks whose output the request replaces. */
  edited: number[];
  /** The tasks that will run, in order. */
  runs: PlannedTask[];
}

/**
 * What resuming or forking a checkpoint with these `--set-output` values would run: the edit is
 * applied to a copy of the document by the same function a real continuation uses
 * (`editTaskOutputsInDocument`, which invalidates every later task), and the tasks left without an
 * output are the ones that run. Nothing is written.
 */
export function planContinuation(
  view: DocumentView,
  outputs: readonly string[] | undefined,
): ContinuationPlan {
  const taskOutputs = parseTaskOutputs(outputs, view) ?? {};
  const edited = viewDocument(
    // Output schemas belong to the runtime, which checks the text when the run starts; a plan only
    // needs to know which tasks lose their output.
    editTaskOutputsInDocument(view.document, taskOutputs, { structuredOutput: () => undefined }),
  );
  const runs = edited.tasks
    .filter((task) => task.status !== 'completed')
    .map((task): PlannedTask => {
      const before = view.tasks[task.index];
      return {
        number: task.index + 1,
        ...(task.name !== undefined ? { name: task.name } : {}),
        description: task.description,
        reason: before?.status === 'completed' ? 'invalidated' : 'unfinished',
      };
    });
  return {
    edited: Object.keys(taskOutputs)
      .map((index) => Number(index) + 1)
      .sort((a, b) => a - b),
    runs,
  };
}
