import { CrewlineError } from '@crewline/events';
import { type CheckpointDocument, type EntityKind, RuntimeState } from '@crewline/runtime-state';
import {
  findUnknownInput,
  nothingLeftToRun,
  parseCrewData,
  parseFlowData,
  taskLabel,
} from '@crewline/runtime-state/internal';
import { changesInputs } from '../crew/interrupted-tasks.js';
import { refuseRedactedStateInDocument } from '../flow/redacted-state.js';
import { savedInputs } from './saved-inputs.js';
import { carriedTaskNumbers } from './saved-interrupted-tasks.js';

/** What a continuation asks of a checkpoint, as `continueFromCheckpoint` takes it. */
export interface ContinuationRequest {
  mode: 'resume' | 'fork';
  inputs?: Record<string, unknown> | undefined;
  taskOutputs?: Record<number, string> | undefined;
}

/** What a continuation with nothing to run was refused for (`details.nothingToRun` of the error). */
export interface NothingToRun {
  checkpointId: string;
  kind: EntityKind;
  mode: 'resume' | 'fork';
  /** Why nothing is left, as `nothingLeftToRun` says it. */
  reason: string;
}

// How to make something run again, in the words of the API and the CLI, by the kind of the run.
const howToRunAgain: Record<EntityKind, string> = {
  crew: "replace a task's output (taskOutputs, --set-output N=text) so the tasks after it run again, or kick off a new run for new inputs",
  flow: 're-run one of its methods and those after it from a saved state (rerunFrom, crewline checkpoint flows rerun --from METHOD), or kick off a new run for new inputs',
  agent: 'kick off the agent again for new inputs',
};

/**
 * Refuses a continuation before anything runs when its inputs name one the run does not know (a
 * typo would change nothing and the run would still pay for its model calls), when work left to run
 * would be filled with an input the checkpoint stored as `[REDACTED]` that the inputs do not give
 * again (`RuntimeState.refuseRedactedInputs`) or a flow's methods left to run would read a state
 * field stored so that the inputs do not give again (`refuseRedactedStateInDocument`), when it edits the
 * output of a task a flow's completed method ran (`checkEditsReachWork`), or when nothing would
 * run: a fork of a finished run — or a resume of one with edits — that would write no checkpoint,
 * make no branch and give back the old output. `document` has the edited outputs applied.
 */
export function checkContinuation(document: CheckpointDocument, request: ContinuationRequest): void {
  const id = document.metadata.id;
  checkInputsKnown(document, request.inputs);
  // A pending task filled with an input stored as [REDACTED] would be sent that text.
  RuntimeState.refuseRedactedInputs(document, request.inputs);
  // So would a flow's pending method reading a state field stored as [REDACTED].
  refuseRedactedStateInDocument(document, request.inputs);
  checkEditsReachWork(document, request.taskOutputs);
  const reason = nothingLeftToRun(document);
  if (reason === undefined) return;
  const edited =
    changesInputs(savedInputs(document), request.inputs) || Object.keys(request.taskOutputs ?? {}).length > 0;
  // A plain resume of a finished run gives its output back, as it always has; it creates nothing.
  if (request.mode === 'resume' && !edited) return;
  const nothingToRun: NothingToRun = {
    checkpointId: id,
    kind: document.entities[0]!.kind,
    mode: request.mode,
    reason,
  };
  throw new CrewlineError('runtime', 'invalid_argument', nothingToRunMessage(nothingToRun), {
    details: { nothingToRun },
  });
}

/**
 * The refusal of a continuation with nothing to run, ending with how to make something run again:
 * by default in the words of the API and the CLI; a terminal UI or a page gives its own (its keys, its
 * form) for the same sentence.
 */
export function nothingToRunMessage(
  { checkpointId, kind, mode, reason }: NothingToRun,
  howToRunAgainInWords: string = howToRunAgain[kind],
): string {
  return `checkpoint ${checkpointId}: nothing to run: ${reason} and no edit makes one run again (changed inputs only reach work that has not run), so the ${mode} would write no checkpoint${mode === 'fork' ? ' and make no branch' : ''}; ${howToRunAgainInWords}`;
}

/**
 * Refuses an edited output (`taskOutputs`, flat task indexes from 0) of a task that a flow's
 * completed method ran. The flow carries that method's crews as saved and hands the methods after it
 * the return value it saved, so the edit would reach nothing, while the tasks after the edited one
 * would be marked to run again on unchanged inputs and paid for again. Re-running the method from a
 * saved state (`rerunFrom`) is what runs its crew again. The edit does not change which crews are
 * carried, so `document` may be the edited copy or the saved one.
 */
function checkEditsReachWork(
  document: CheckpointDocument,
  taskOutputs: Readonly<Record<number, string>> | undefined,
): void {
  if (taskOutputs === undefined) return;
  const carried = carriedTaskNumbers(document);
  if (carried.size === 0) return;
  const edited = Object.keys(taskOutputs)
    .map(Number)
    .sort((a, b) => a - b)
    .find((index) => carried.has(index + 1));
  if (edited === undefined) return;
  const task = describeTask(document, edited);
  const root = parseFlowData(document.entities[0]!);
  const completed = root.execution.completedMethods;
  // Which completed method ran a crew is not saved (only the order of the crews), so a flow with
  // several completed methods leaves the choice to the reader, who knows the flow's code.
  const method =
    completed.length === 1
      ? JSON.stringify(completed[0])
      : `the method that ran crew ${JSON.stringify(task.crew)}, one of ${completed.join(', ')}`;
  const from = completed.length === 1 ? completed[0]! : 'METHOD';
  throw new CrewlineError(
    'runtime',
    'invalid_argument',
    `checkpoint ${document.metadata.id}: task ${edited + 1} (${task.label}) was run by a method of flow "${root.flowName}" that already completed (completed: ${completed.join(', ')}); a continuation keeps that method's crews and the value it returned as saved, so the edited output would reach nothing and the tasks after it would run again on unchanged inputs; to run that method again, re-run it and the methods after it from a saved state: rerunFrom ${method} (kickoff({ inputs: { id: ${JSON.stringify(root.stateId)} }, rerunFrom: ${JSON.stringify(from)} }), crewline checkpoint flows rerun ${root.stateId} --from ${from})`,
  );
}

/** The label and crew name of the task at flat index `index` (counting every crew's tasks). */
function describeTask(document: CheckpointDocument, index: number): { label: string; crew: string } {
  let flat = 0;
  for (const entity of document.entities) {
    if (entity.kind !== 'crew') continue;
    for (const task of parseCrewData(entity).tasks) {
      if (flat === index) return { label: taskLabel(task.name, task.description), crew: entity.name };
      flat += 1;
    }
  }
  return { label: `task ${index + 1}`, crew: 'unknown' };
}

/**
 * Refuses inputs that name one the run does not know (not a kickoff input, a `{placeholder}` of its
 * templates nor a key of a flow's state): a typo would change nothing and the run would still pay
 * for its model calls. Part of `checkContinuation`.
 */
function checkInputsKnown(
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>> | undefined,
): void {
  if (inputs === undefined) return;
  const unknown = findUnknownInput(document, inputs);
  if (unknown === undefined) return;
  throw new CrewlineError(
    'runtime',
    'invalid_argument',
    `checkpoint ${document.metadata.id}: input "${unknown.key}" is not one the run knows (known: ${unknown.known.join(', ') || 'none'}); check its spelling (inputs, --input${unknown.nearest === undefined ? '' : `; did you mean --input ${unknown.nearest}=…?`}), or kick off a new run for new inputs`,
  );
}
