import { logger } from '@crewline/events';
import type { Task } from '../task/task.js';

/** Whether `inputs` gives any key another value than `saved` (the inputs a run was kicked off with). */
export function changesInputs(
  saved: Readonly<Record<string, unknown>>,
  inputs: Readonly<Record<string, unknown>> | undefined,
): boolean {
  if (inputs === undefined) return false;
  return Object.keys(inputs).some((key) => JSON.stringify(inputs[key]) !== JSON.stringify(saved[key]));
}

/**
 * What starting over an interrupted task costs, as a clause its warnings end with: the model calls
 * of its saved conversation that completed are made (and paid) again. With `kept`, the clause of a
 * task that continues its conversation instead: they are not made again. Empty when it had made none.
 */
export function callsMadeAgain(calls: number, options: { kept?: boolean } = {}): string {
  if (calls === 0) return '';
  return `; the ${calls} model call${calls === 1 ? '' : 's'} it had made ${calls === 1 ? 'is' : 'are'} ${options.kept ? 'not ' : ''}made again`;
}

/**
 * Starts over the tasks a continued run was interrupted in, when it continues with changed inputs:
 * such a task would otherwise continue its saved conversation, whose prompts were filled with the
 * old inputs, so the new ones would never reach it. Says so, with the model calls made again (its
 * completed calls are paid again: the price of the new inputs). Without changed inputs a resume
 * continues the conversation and pays for nothing twice.
 */
export function restartInterruptedTasks(owner: string, tasks: readonly Task[]): void {
  for (const [index, task] of tasks.entries()) {
    if (task.status === 'completed' || task.conversation === undefined) continue;
    logger.warn(
      'runtime',
      `${owner}: task ${index + 1} "${task.label}" was interrupted; with the changed inputs it starts over instead of continuing its saved conversation, whose prompts hold the old inputs${callsMadeAgain(task.conversation.llmCalls)}`,
    );
    task.resetProgress();
  }
}
