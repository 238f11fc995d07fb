import { type ContinuationRequest, checkContinuation } from '@crewline/runtime/internal';
import type { CheckpointDocument } from '@crewline/runtime-state';
import { editTaskOutputsInDocument } from '@crewline/runtime-state/internal';
import { nothingToRunInWords, type RunAgainWords } from './nothing-to-run.js';

/**
 * The runtime's own refusal (an input the run does not know, nothing that would run), asked before
 * the CLI or the explorer says anything about the continuation: nothing may announce a fork that is
 * then refused. The runtime checks again when it runs; structured outputs are not parsed here
 * because the check only reads which tasks are completed. `words`: how the place asking says to make
 * something run again (default: the API's and the CLI's).
 */
export function checkBeforeRunning(
  document: CheckpointDocument,
  request: ContinuationRequest,
  words?: RunAgainWords,
): void {
  const edited =
    request.taskOutputs && Object.keys(request.taskOutputs).length > 0
      ? editTaskOutputsInDocument(document, request.taskOutputs, { structuredOutput: () => undefined })
      : document;
  try {
    checkContinuation(edited, request);
  } catch (error) {
    throw (words && nothingToRunInWords(error, words)) ?? error;
  }
}
