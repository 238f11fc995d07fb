import { isDeepStrictEqual } from 'node:util';
import type { DocumentView } from '../../core/document-view.js';
import type { StartOverFlags } from '../../core/start-over-command.js';
import type { RunRequest } from './browser-state.js';

/**
 * A run request of the browser as the command line's flags: what a hint names to start the run over.
 * Its edits live in the browser's memory only, so a hint without them started over on the originals.
 * The request holds every input (edited or not); only the edited ones are flags.
 */
export function startOverFlags(
  request: RunRequest,
  view: Pick<DocumentView, 'inputs' | 'tasks'>,
): StartOverFlags {
  const flags: StartOverFlags = {};
  if (request.branch !== undefined) flags.branch = request.branch;
  const inputs = Object.entries(request.inputs ?? {})
    .filter(([key, value]) => !isDeepStrictEqual(value, view.inputs[key]))
    .map(([key, value]) =>
      typeof value === 'string' ? `${key}=${value}` : `${key}:=${JSON.stringify(value)}`,
    );
  if (inputs.length > 0) flags.inputs = inputs;
  // `--set-output N`: N the task's number as `info` and the detail pane show it, from 1.
  const outputs = Object.entries(request.taskOutputs ?? {}).map(([index, text]) => {
    const number = view.tasks.findIndex((task) => task.index === Number(index)) + 1;
    return `${number > 0 ? number : Number(index) + 1}=${text}`;
  });
  if (outputs.length > 0) flags.outputs = outputs;
  if (request.humanInput !== undefined) flags.answer = request.humanInput;
  return flags;
}
