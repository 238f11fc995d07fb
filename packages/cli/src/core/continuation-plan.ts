import { callsMadeAgain, interruptedTasks, restartsInterruptedTasks } from '@crewline/runtime/internal';
import { editTaskOutputsInDocument } from '@crewline/runtime-state/internal';
import { type DocumentView, viewDocument } from './document-view.js';
import { parseTaskOutputs } from './task-outputs.js';

/** A task a continuation would run, and why. */
export interface PlannedTask {
  /** Number as `info` and `--set-output` count. */
  number: number;
  name?: string;
  description: string;
  /**
   * `invalidated`: an earlier output was edited, so it runs again against the new context (it was
   * completed, or interrupted with a saved conversation that is dropped). `restarted`: interrupted
   * with a saved conversation, and the changed inputs start it over (its prompts hold the old ones).
   * `continued`: interrupted, and it continues its saved conversation (no call it made is made
   * again). `unfinished`: never started, or in progress without a saved conversation.
   */
  reason: 'invalidated' | 'restarted' | 'continued' | 'unfinished';
  /**
   * Interrupted tasks only: the model calls of its saved conversation that completed. Made (and
   * paid) again when the reason is `restarted` or `invalidated`; not made again when `continued`.
   */
  savedCalls?: number;
  /** Why it runs, in the words the explorer's page and `resume`/`fork` show. */
  note: string;
}

export interface ContinuationPlan {
  /** Numbers of the tasks whose output the request replaces. */
  edited: number[];
  /** Whether the inputs given differ from the run's: they start interrupted tasks over. */
  inputsChanged: boolean;
  /** The tasks that will run, in order. */
  runs: PlannedTask[];
}

/**
 * What resuming or forking a checkpoint with these `--set-output` values and these `inputs` (all the
 * kickoff inputs, changes applied) would run. The edit is applied to a copy of the document by the
 * same function a real continuation uses (`editTaskOutputsInDocument`, which invalidates every later
 * task), and the tasks left without an output are the ones that run. Whether an interrupted task
 * starts over or continues its saved conversation is the runtime's own decision
 * (`restartsInterruptedTasks`), and its saved calls are counted as the worker's warning counts them
 * (`interruptedTasks`). Nothing is written.
 */
export function planContinuation(
  view: DocumentView,
  outputs: readonly string[] | undefined,
  inputs?: Readonly<Record<string, unknown>>,
): ContinuationPlan {
  const taskOutputs = parseTaskOutputs(outputs, view) ?? {};
  // Output schemas belong to the runtime, which checks the text when the run starts; a plan only
  // needs to know which tasks lose their output.
  const editedDocument = editTaskOutputsInDocument(view.document, taskOutputs, {
    structuredOutput: () => undefined,
  });
  const edited = viewDocument(editedDocument);
  const inputsChanged = restartsInterruptedTasks(view.document, inputs);
  const savedCalls = new Map(
    interruptedTasks(view.document).map((task) => [task.number, task.completedCalls]),
  );
  // Those still holding their conversation after the edit: an output edited before one drops it.
  const stillInterrupted = new Set(interruptedTasks(editedDocument).map((task) => task.number));
  const runs = edited.tasks
    .filter((task) => task.status !== 'completed')
    .map((task): PlannedTask => {
      const number = task.index + 1;
      const before = view.tasks[task.index];
      const calls = savedCalls.get(number);
      const reason: PlannedTask['reason'] =
        before?.status === 'completed' || (calls !== undefined && !stillInterrupted.has(number))
          ? 'invalidated'
          : calls === undefined
            ? 'unfinished'
            : inputsChanged
              ? 'restarted'
              : 'continued';
      return {
        number,
        ...(task.name !== undefined ? { name: task.name } : {}),
        description: task.description,
        reason,
        ...(calls !== undefined ? { savedCalls: calls } : {}),
        note: noteFor(reason, calls ?? 0),
      };
    });
  return {
    edited: Object.keys(taskOutputs)
      .map((index) => Number(index) + 1)
      .sort((a, b) => a - b),
    inputsChanged,
    runs,
  };
}

/** Why a planned task runs; for an interrupted one, what its saved calls cost (as the runtime warns). */
function noteFor(reason: PlannedTask['reason'], savedCalls: number): string {
  switch (reason) {
    case 'invalidated':
      return `runs again: an earlier output was edited${callsMadeAgain(savedCalls)}`;
    case 'restarted':
      return `starts over with the new inputs${callsMadeAgain(savedCalls)}`;
    case 'continued':
      return `continues its saved conversation${callsMadeAgain(savedCalls, { kept: true })}`;
    case 'unfinished':
      return 'not finished in this checkpoint';
  }
}
