import { logger } from '@crewline/events';
import { changesInputs } from '@crewline/runtime/internal';
import { type CheckpointDocument, decodeValue } from '@crewline/runtime-state';
import { parseCrewData, taskLabel } from '@crewline/runtime-state/internal';
import { component } from './errors.js';

/** A crew task a checkpoint holds in progress, with the conversation a resume would continue. */
export interface InterruptedTask {
  /** From 1, as `crewline checkpoint info` numbers tasks. */
  number: number;
  label: string;
  /** Model calls of its saved conversation that completed: made again when the task starts over. */
  completedCalls: number;
}

/**
 * The tasks a fork of `document` would continue from a saved conversation: those in progress (a run
 * cancelled or stopped mid-task). Their prompts were filled with the run's inputs when they
 * started, so a fork that changes inputs starts them over instead (see `restartInterruptedTasks`).
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
 * Says, when a fork changes inputs, which interrupted tasks start over and what that costs: the
 * saved conversation they would have continued was prompted with the old inputs.
 */
export function warnAboutRestarts(
  runId: string,
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>> | undefined,
): void {
  if (!changesInputs(savedInputs(document), inputs)) return;
  for (const task of interruptedTasks(document)) {
    const cost =
      task.completedCalls === 0
        ? ''
        : `; the ${task.completedCalls} model call${task.completedCalls === 1 ? '' : 's'} it had made ${task.completedCalls === 1 ? 'is' : 'are'} made again`;
    logger.warn(
      component,
      `fork("${runId}"): task ${task.number} "${task.label}" was interrupted in the run; with the changed inputs it starts over instead of continuing its saved conversation, whose prompts hold the old inputs${cost}`,
    );
  }
}
