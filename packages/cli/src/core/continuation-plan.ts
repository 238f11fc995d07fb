import {
  type ContinuedFlowMethods,
  callsMadeAgain,
  carriedTaskNumbers,
  continuedFlowMethods,
  type InterruptedTasksOutcome,
  interruptedTasks,
  interruptedTasksOutcome,
  type RestartCause,
} from '@crewline/runtime/internal';
import { editTaskOutputsInDocument } from '@crewline/runtime-state/internal';
import { type DocumentView, viewDocument } from './document-view.js';
import { parseTaskOutputs } from './task-outputs.js';

/** A task a continuation would run, and why. */
export interface PlannedTask {
  /** Number as `info` and `--set-output` count. */
  number: number;
  name?: string;
  /**
   * The description the task will run with: filled from the inputs given when they reach it (a
   * crew's run; a flow passes its crews what its code decides), else as the checkpoint's run had it.
   */
  description: string;
  /**
   * `invalidated`: an earlier output was edited, so it runs again against the new context (it was
   * completed, or interrupted with a saved conversation that is dropped). `restarted`: interrupted
   * with a saved conversation, which it starts over instead of continuing, for `restartCause`.
   * `continued`: interrupted, and it continues its saved conversation (no call it made is made
   * again). `flow-decides`: interrupted inside a flow whose method may start it over, for
   * `restartCause`: it continues unless the method gives its crew other inputs than the crew saved,
   * or the credential again, then starts over (only the flow's code knows which). `unfinished`: never
   * started, or in progress without a saved conversation.
   */
  reason: 'invalidated' | 'restarted' | 'continued' | 'flow-decides' | 'unfinished';
  /**
   * `restarted` and `flow-decides` only: why, as the runtime decides it. `changed-inputs`: the inputs
   * change what the run saved, and the saved conversation's prompts hold the old values.
   * `credential-given-again`: nothing changed, but a credential saved as `[REDACTED]` is given again
   * and the saved conversation holds that text: started over, the task sends the model the real one.
   * Under `flow-decides`, `changed-inputs` may come with a credential the flow's method gives its
   * crew again (the note then says both).
   */
  restartCause?: RestartCause;
  /**
   * Interrupted tasks only: the model calls of its saved conversation that completed. Made (and
   * paid) again when the reason is `restarted` or `invalidated`; not made again when `continued`;
   * made again under `flow-decides` only if the flow gives the crew other inputs (or the
   * credential again, for that cause).
   */
  savedCalls?: number;
  /** Why it runs, in the words the explorer's page and `resume`/`fork` show. */
  note: string;
}

export interface ContinuationPlan {
  /** Numbers of the tasks whose output the request replaces. */
  edited: number[];
  /**
   * Whether the inputs given change what the run's work was given: a crew's saved inputs (they start
   * interrupted tasks over), or a flow's saved state (its methods may pass its crews other inputs). A
   * credential saved as `[REDACTED]` given again is no change, even when it starts a task over.
   */
  inputsChanged: boolean;
  /** The tasks that will run, in order: of those the checkpoint holds. */
  runs: PlannedTask[];
  /**
   * Flows only: the methods the continuation restores and runs (the runtime's reading of the saved
   * executions), and `note`, what the page and the heading say of them: a due method's crews that
   * the checkpoint does not hold yet, and the methods after it, run tasks no plan can list.
   */
  flow?: ContinuedFlowMethods & { note: string };
  /**
   * A resume of a checkpoint its run went past (see {@link PlanOptions.newerHead}): the run's latest
   * checkpoint, the numbers of the tasks it completed that run again on the new branch the resume
   * moves to (and are paid for again), and `note`, what the page says of it before the run starts.
   */
  olderCheckpoint?: { headId: string; runAgain: number[]; note: string };
}

/** What a plan knows of the checkpoint's run beside the checkpoint itself. */
export interface PlanOptions {
  /**
   * A resume only: the latest checkpoint of the checkpoint's run (lineage and branch) when it is
   * another one. The runtime continues such a resume on a new branch and runs again what the run did
   * after the checkpoint: the plan says so. Default: none (the checkpoint is the latest, or a fork).
   */
  newerHead?: { id: string; view: DocumentView };
}

/**
 * What resuming or forking a checkpoint with these `--set-output` values and these `inputs` (what the
 * continuation is given: `continuedInputs`) would run. The edit is applied to a copy of the document by the
 * same function a real continuation uses (`editTaskOutputsInDocument`, which invalidates the later
 * tasks of the edited crew and of the crews that ran after it on the same work, never those of a
 * parallel method's crew), and the tasks left without an output are the ones that run, but for those of the crews a
 * flow's completed methods ran: the flow carries them as saved and never runs them again
 * (`carriedTaskNumbers`, the runtime's rule). Whether an interrupted task starts over or continues
 * its saved conversation is the runtime's own decision (`interruptedTasksOutcome`; inside a flow it
 * can depend on the flow's code, and the plan says so), and its saved calls are counted as the
 * worker's warning counts them (`interruptedTasks`). The plan lists the tasks the checkpoint holds:
 * a flow's methods that have not run yet run their crews too. Nothing is written.
 */
export function planContinuation(
  view: DocumentView,
  outputs: readonly string[] | undefined,
  inputs?: Readonly<Record<string, unknown>>,
  options: PlanOptions = {},
): ContinuationPlan {
  const taskOutputs = parseTaskOutputs(outputs, view) ?? {};
  // Output schemas belong to the runtime, which checks the text when the run starts; a plan only
  // needs to know which tasks lose their output.
  const editedDocument = editTaskOutputsInDocument(view.document, taskOutputs, {
    structuredOutput: () => undefined,
  });
  // The tasks as they will run: a crew continued on its own gets these inputs over its saved ones
  // (its kickoff merges them), so their descriptions are filled with them; a flow gives its crews
  // what its methods decide, so those stay as the checkpoint's run had them.
  const ownInputs = view.entities.some((entity) => entity.kind === 'flow') ? undefined : inputs;
  const edited = viewDocument(editedDocument, ownInputs ? { crewInputs: ownInputs } : {});
  const outcome = interruptedTasksOutcome(view.document, inputs);
  const carried = carriedTaskNumbers(view.document);
  const savedCalls = new Map(
    interruptedTasks(view.document).map((task) => [task.number, task.completedCalls]),
  );
  // Those still holding their conversation after the edit: an output edited before one drops it.
  const stillInterrupted = new Set(interruptedTasks(editedDocument).map((task) => task.number));
  const { newerHead } = options;
  // Tasks the run's latest checkpoint completed: a resume of this older one runs them again.
  const doneSince = new Set(
    (newerHead?.view.tasks ?? []).filter((task) => task.status === 'completed').map((task) => task.index + 1),
  );
  const runs = edited.tasks
    .filter((task) => task.status !== 'completed' && !carried.has(task.index + 1))
    .map((task): PlannedTask => {
      const number = task.index + 1;
      const before = view.tasks[task.index];
      const calls = savedCalls.get(number);
      const reason: PlannedTask['reason'] =
        before?.status === 'completed' || (calls !== undefined && !stillInterrupted.has(number))
          ? 'invalidated'
          : calls === undefined
            ? 'unfinished'
            : interruptedReason[outcome.action];
      const startsOver = reason === 'restarted' || reason === 'flow-decides';
      const note = noteFor(reason, calls ?? 0, outcome);
      return {
        number,
        ...(task.name !== undefined ? { name: task.name } : {}),
        description: task.description,
        reason,
        ...(startsOver && outcome.action !== 'continue' ? { restartCause: outcome.cause } : {}),
        ...(calls !== undefined ? { savedCalls: calls } : {}),
        note:
          newerHead !== undefined && doneSince.has(number)
            ? `${note}; completed in the run's later checkpoint ${newerHead.id}: runs again on the new branch, paid again`
            : note,
      };
    });
  const runAgain = runs.map((task) => task.number).filter((number) => doneSince.has(number));
  return {
    edited: Object.keys(taskOutputs)
      .map((index) => Number(index) + 1)
      .sort((a, b) => a - b),
    inputsChanged: outcome.action !== 'continue' && outcome.cause === 'changed-inputs',
    runs,
    ...flowPlan(view),
    ...(newerHead !== undefined
      ? { olderCheckpoint: olderCheckpointPlan(view.document.metadata.id, newerHead.id, runAgain) }
      : {}),
  };
}

/**
 * What a resume of a checkpoint its run went past does, in the runtime's words (its warning as it
 * moves: `checkpoint … is not the latest of its run (… is); continuing on a new branch`), said before
 * the run is started, with the tasks it pays for again.
 */
function olderCheckpointPlan(
  checkpointId: string,
  headId: string,
  runAgain: number[],
): NonNullable<ContinuationPlan['olderCheckpoint']> {
  const again =
    runAgain.length === 0
      ? 'runs no task the run completed since'
      : `runs ${runAgain.length === 1 ? 'task' : 'tasks'} ${listed(runAgain.map(String))} again, paying again for ${runAgain.length === 1 ? 'its' : 'their'} model calls`;
  return {
    headId,
    runAgain,
    note: `checkpoint ${checkpointId} is not the latest of its run (${headId} is); a resume continues on a new branch, so nothing of that run is overwritten, and ${again}. To go on from where the run got, resume ${headId}; to branch off here on purpose, fork`,
  };
}

/** The `flow` part of a plan of a flow's checkpoint, with what it says of the flow's methods. */
function flowPlan(view: DocumentView): Pick<ContinuationPlan, 'flow'> {
  const methods = continuedFlowMethods(view.document);
  if (methods === undefined) return {};
  const { completed, due, paused } = methods;
  const said = [
    ...(completed.length > 0 ? [`keeps ${listed(completed)} as completed`] : []),
    ...(due.length > 0
      ? [
          `runs ${listed(due)} from the start, then the methods that listen to ${due.length === 1 ? 'it' : 'them'}`,
        ]
      : []),
    ...(paused.length > 0
      ? [
          `runs ${listed(paused)} again once given the answer${paused.length === 1 ? ' it waits' : 's they wait'} for`,
        ]
      : []),
  ];
  const runsMore = due.length > 0 || paused.length > 0;
  const note = `the flow ${said.join(', ') || 'has no method to run'}${runsMore ? '; tasks of crews this checkpoint does not hold yet are not listed' : ''}`;
  return { flow: { ...methods, note } };
}

/** `a`, `a and b`, `a, b and c`. */
function listed(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/** The reason of a task that still holds its saved conversation, by the runtime's decision. */
const interruptedReason = {
  continue: 'continued',
  restart: 'restarted',
  'flow-decides': 'flow-decides',
} as const satisfies Record<InterruptedTasksOutcome['action'], PlannedTask['reason']>;

/**
 * Why a planned task runs; for an interrupted one, what its saved calls cost (as the runtime warns).
 * A task the runtime starts over (or may, inside a flow) is said in the runtime's words for the cause
 * of `outcome`, the one its reason was taken from.
 */
function noteFor(
  reason: PlannedTask['reason'],
  savedCalls: number,
  outcome: InterruptedTasksOutcome,
): string {
  switch (reason) {
    case 'invalidated':
      return `runs again: an earlier output was edited${callsMadeAgain(savedCalls)}`;
    case 'restarted':
    case 'flow-decides':
      return `${outcome.action === 'continue' ? '' : outcome.words.plan}${callsMadeAgain(savedCalls)}`;
    case 'continued':
      return `continues its saved conversation${callsMadeAgain(savedCalls, { kept: true })}`;
    case 'unfinished':
      return 'not finished in this checkpoint';
  }
}
