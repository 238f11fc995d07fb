import { type CheckpointDocument, decodeValue } from '@crewline/runtime-state';
import { parseCrewData, parseFlowData, taskLabel } from '@crewline/runtime-state/internal';
import {
  changesInputs,
  givesRedactedAgain,
  promptsHoldRedacted,
  startsInterruptedTasksOver,
} from '../crew/interrupted-tasks.js';
import { carriedSnapshots } from './carry-nested-snapshots.js';
import { savedInputs } from './saved-inputs.js';

/** A crew task a checkpoint holds in progress, with the conversation a continuation would continue. */
export interface InterruptedTask {
  /** From 1 across the checkpoint's crews, as `crewline checkpoint info` and `--set-output` number tasks. */
  number: number;
  label: string;
  /** Model calls of its saved conversation that completed: made again when the task starts over. */
  completedCalls: number;
}

/**
 * The tasks a resume or fork of `document` would continue from a saved conversation: those in
 * progress (a run cancelled or stopped mid-task). Their prompts were filled with the run's inputs
 * when they started, so a continuation that changes inputs starts them over instead
 * (`restartInterruptedTasks`, at the crew's kickoff).
 */
export function interruptedTasks(document: CheckpointDocument): InterruptedTask[] {
  const found: InterruptedTask[] = [];
  let number = 0;
  for (const entity of document.entities) {
    if (entity.kind !== 'crew') continue;
    for (const task of parseCrewData(entity).tasks) {
      number += 1;
      if (task.status === 'completed' || task.conversation === null) continue;
      found.push({
        number,
        label: taskLabel(task.name, task.description),
        completedCalls: task.conversation.llmCalls,
      });
    }
  }
  return found;
}

/**
 * Whether continuing `document` with `inputs` starts its interrupted tasks over rather than
 * continuing their saved conversations: the decision the crew's kickoff makes
 * (`startsInterruptedTasksOver` against the inputs the run was kicked off with: a changed input, or
 * a credential saved as `[REDACTED]` given again while an interrupted task's saved prompts hold that
 * text), taken before anything runs. Right for a crew's checkpoint; a flow gives its crews what its
 * methods pass them (see `interruptedTasksOutcome`).
 */
export function restartsInterruptedTasks(
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>> | undefined,
): boolean {
  return startsInterruptedTasksOver(savedInputs(document), inputs, () =>
    interruptedPromptsHoldRedacted(document),
  );
}

/** Whether a task a crew of `document` holds in progress has saved prompts holding `[REDACTED]`. */
function interruptedPromptsHoldRedacted(document: CheckpointDocument): boolean {
  return document.entities.some(
    (entity) =>
      entity.kind === 'crew' &&
      parseCrewData(entity).tasks.some(
        (task) =>
          task.status !== 'completed' &&
          task.conversation !== null &&
          promptsHoldRedacted(task.systemPrompt, task.conversation.messages, task.delegations),
      ),
  );
}

/**
 * What continuing `document` with `inputs` (all the kickoff inputs, changes applied) does with its
 * interrupted tasks. A crew's kickoff compares the inputs it is given with those it saved:
 * `restart` when one changes (`restartsInterruptedTasks`), else `continue`. A crew inside a flow is
 * given what the flow's method passes it, which only the flow's code knows; the method runs again on
 * the flow's saved state with the inputs merged in, so while they change no key of that state it
 * passes what it passed before (`continue`), and once they do it is `flow-decides`: the task
 * continues unless the method passes its crew other inputs than the crew saved. A value saved as
 * `[REDACTED]` given again is no change (`changesInputs`): the credential the run had, which the
 * checkpoint could not hold; it is `flow-decides` only when an interrupted task's saved prompts hold
 * `[REDACTED]` (the crew starts it over if the method passes it the credential).
 */
export function interruptedTasksOutcome(
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>> | undefined,
): 'continue' | 'restart' | 'flow-decides' {
  const root = document.entities[0];
  if (root?.kind !== 'flow') return restartsInterruptedTasks(document, inputs) ? 'restart' : 'continue';
  // `id` names the state to continue (a different one is refused), it is not merged into it.
  const { id: _stateId, ...stateInputs } = inputs ?? {};
  const state = decodeValue<unknown>(parseFlowData(root).state);
  const saved = state !== null && typeof state === 'object' ? (state as Record<string, unknown>) : {};
  if (changesInputs(saved, stateInputs)) return 'flow-decides';
  // A credential the state saved as [REDACTED], given again, is no change; but a crew the method
  // passes it to starts over a task whose saved prompts hold that text (`restartsInterruptedTasks`).
  return givesRedactedAgain(saved, stateInputs) && interruptedPromptsHoldRedacted(document)
    ? 'flow-decides'
    : 'continue';
}

/**
 * Numbers (as `interruptedTasks` numbers them) of the tasks a continuation of `document` never runs,
 * whatever their status or an edit of an output before them: those of the crews a flow's completed
 * methods ran, which it carries as saved (`carriedSnapshots`). None for a crew's checkpoint.
 */
export function carriedTaskNumbers(document: CheckpointDocument): Set<number> {
  const carried = new Set(carriedSnapshots(document));
  const found = new Set<number>();
  let number = 0;
  for (const entity of document.entities) {
    if (entity.kind !== 'crew') continue;
    for (const _task of parseCrewData(entity).tasks) {
      number += 1;
      if (carried.has(entity)) found.add(number);
    }
  }
  return found;
}
