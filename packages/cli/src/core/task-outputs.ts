import { usageError } from './cli-error.js';
import type { DocumentView } from './document-view.js';
import { truncate } from './format.js';

/** `--set-output N=text` values as flat task indexes, checked against the checkpoint's tasks. */
export function parseTaskOutputs(
  pairs: readonly string[] | undefined,
  view: DocumentView,
): Record<number, string> | undefined {
  if (!pairs || pairs.length === 0) return undefined;
  const outputs: Record<number, string> = {};
  for (const pair of pairs) {
    const match = /^(\d+)=([\s\S]*)$/.exec(pair);
    if (!match)
      throw usageError(
        `--set-output "${truncate(pair, 40)}" must look like N=text, N being a task number from \`info\``,
      );
    const number = Number(match[1]);
    const task = view.tasks[number - 1];
    if (!task) {
      throw usageError(
        `--set-output ${number}: the checkpoint has ${view.tasks.length} tasks, numbered 1 to ${view.tasks.length}`,
      );
    }
    if (task.status !== 'completed') {
      throw usageError(
        `--set-output ${number}: task ${number} is ${task.status}; only completed task outputs can be replaced`,
      );
    }
    outputs[task.index] = match[2]!;
  }
  return outputs;
}
