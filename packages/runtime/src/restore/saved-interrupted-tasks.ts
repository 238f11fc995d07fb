import { type CheckpointDocument, decodeValue } from '@crewline/runtime-state';
import { parseCrewData, taskLabel } from '@crewline/runtime-state/internal';
import { changesInputs } from '../crew/interrupted-tasks.js';

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

/** The kickoff inputs a checkpoint holds, as a record. */
export function savedInputs(document: CheckpointDocument): Record<string, unknown> {
  const saved = decodeValue<unknown>(document.inputs);
  return saved !== null && typeof saved === 'object' ? (saved as Record<string, unknown>) : {};
}

/**
 * Whether continuing `document` with `inputs` starts its interrupted tasks over rather than
 * continuing their saved conversations: the decision the crew's kickoff makes (`changesInputs`
 * against the inputs the run was kicked off with), taken before anything runs.
 */
export function restartsInterruptedTasks(
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>> | undefined,
): boolean {
  return changesInputs(savedInputs(document), inputs);
}
