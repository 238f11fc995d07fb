import { logger } from '@crewline/events';
import { callsMadeAgain, interruptedTasks, interruptedTasksOutcome } from '@crewline/runtime/internal';
import type { CheckpointDocument } from '@crewline/runtime-state';
import { component } from './errors.js';

/**
 * Says, when a fork changes inputs, which interrupted tasks start over and what that costs: the
 * saved conversation they would have continued was prompted with the old inputs. The tasks and the
 * decision come from the runtime (`interruptedTasks`, `interruptedTasksOutcome`), as the explorer's
 * plan takes them, so the warning and the run cannot disagree. In a flow the crew's inputs are what
 * the flow's method gives it, which only the run will tell: the warning then says so.
 */
export function warnAboutRestarts(
  runId: string,
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>> | undefined,
): void {
  const outcome = interruptedTasksOutcome(document, inputs);
  if (outcome === 'continue') return;
  for (const task of interruptedTasks(document)) {
    const cost = callsMadeAgain(task.completedCalls);
    logger.warn(
      component,
      outcome === 'restart'
        ? `fork("${runId}"): task ${task.number} "${task.label}" was interrupted in the run; with the changed inputs it starts over instead of continuing its saved conversation, whose prompts hold the old inputs${cost}`
        : `fork("${runId}"): task ${task.number} "${task.label}" was interrupted in the run; it continues its saved conversation unless the flow gives its crew other inputs with the changed ones, then starts over${cost}`,
    );
  }
}
