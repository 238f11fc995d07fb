import { logger } from '@crewline/events';
import { callsMadeAgain, interruptedTasks, restartsInterruptedTasks } from '@crewline/runtime/internal';
import type { CheckpointDocument } from '@crewline/runtime-state';
import { component } from './errors.js';

/**
 * Says, when a fork changes inputs, which interrupted tasks start over and what that costs: the
 * saved conversation they would have continued was prompted with the old inputs. The tasks and the
 * decision come from the runtime (`interruptedTasks`, `restartsInterruptedTasks`), as the explorer's
 * plan takes them, so the warning and the run cannot disagree.
 */
export function warnAboutRestarts(
  runId: string,
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>> | undefined,
): void {
  if (!restartsInterruptedTasks(document, inputs)) return;
  for (const task of interruptedTasks(document)) {
    logger.warn(
      component,
      `fork("${runId}"): task ${task.number} "${task.label}" was interrupted in the run; with the changed inputs it starts over instead of continuing its saved conversation, whose prompts hold the old inputs${callsMadeAgain(task.completedCalls)}`,
    );
  }
}
