import { logger } from '@crewline/events';
import { callsMadeAgain, interruptedTasks, interruptedTasksOutcome } from '@crewline/runtime/internal';
import type { CheckpointDocument } from '@crewline/runtime-state';
import { component } from './errors.js';

/**
 * Says, when a fork starts the tasks its run was interrupted in over (or may: a crew inside a flow),
 * which ones, why and what that costs: the inputs changed, so the saved conversations they would have
 * continued hold the old ones; or a credential saved as `[REDACTED]` is given again to a conversation
 * that holds that text. The tasks, the decision and its words come from the runtime (`interruptedTasks`,
 * `interruptedTasksOutcome`), as the CLI's and the explorer's plans take them, so the warning and the
 * run cannot disagree. In a flow the crew's inputs are what the flow's method gives it, which only the
 * run will tell: the warning then says so.
 */
export function warnAboutRestarts(
  runId: string,
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>> | undefined,
): void {
  const outcome = interruptedTasksOutcome(document, inputs);
  if (outcome.action === 'continue') return;
  for (const task of interruptedTasks(document))
    logger.warn(
      component,
      `fork("${runId}"): task ${task.number} "${task.label}" was interrupted in the run; ${outcome.words.warning}${callsMadeAgain(task.completedCalls)}`,
    );
}
