import { type ContinuationRequest, checkContinuation } from '@crewline/runtime/internal';
import type { CheckpointDocument } from '@crewline/runtime-state';
import { editTaskOutputsInDocument, findUnknownInput, nearestName } from '@crewline/runtime-state/internal';
import { usageError } from './cli-error.js';

/**
 * The runtime's own refusal (an input the run does not know, nothing that would run), asked before
 * the CLI or the explorer says anything about the continuation: nothing may announce a fork that is
 * then refused. The runtime checks again when it runs; structured outputs are not parsed here
 * because the check only reads which tasks are completed.
 */
export function checkBeforeRunning(document: CheckpointDocument, request: ContinuationRequest): void {
  refuseMisspelledInput(document, request.inputs);
  const edited =
    request.taskOutputs && Object.keys(request.taskOutputs).length > 0
      ? editTaskOutputsInDocument(document, request.taskOutputs, { structuredOutput: () => undefined })
      : document;
  checkContinuation(edited, request);
}

/**
 * The runtime's refusal of an unknown input, naming the known input it is probably a misspelling of
 * (as `runs enqueue` does): the known list alone leaves the user to spot the typo. An unknown input
 * close to no known one is left to the runtime's own refusal.
 */
function refuseMisspelledInput(
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>> | undefined,
): void {
  if (inputs === undefined) return;
  const unknown = findUnknownInput(document, inputs);
  if (unknown === undefined) return;
  const near = nearestName(unknown.key, unknown.known);
  if (near === undefined) return;
  throw usageError(
    `checkpoint ${document.metadata.id}: input "${unknown.key}" is not one the run knows (known: ${unknown.known.join(', ')}); check its spelling (did you mean --input ${near}=…?), or kick off a new run for new inputs`,
  );
}
