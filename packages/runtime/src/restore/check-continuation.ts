import { CrewlineError } from '@crewline/events';
import type { CheckpointDocument, EntityKind } from '@crewline/runtime-state';
import { findUnknownInput, nothingLeftToRun } from '@crewline/runtime-state/internal';
import { changesInputs } from '../crew/interrupted-tasks.js';
import { savedInputs } from './saved-interrupted-tasks.js';

/** What a continuation asks of a checkpoint, as `continueFromCheckpoint` takes it. */
export interface ContinuationRequest {
  mode: 'resume' | 'fork';
  inputs?: Record<string, unknown> | undefined;
  taskOutputs?: Record<number, string> | undefined;
}

// How to make something run again, in the words of the API and the CLI, by the kind of the run.
const howToRunAgain: Record<EntityKind, string> = {
  crew: "replace a task's output (taskOutputs, --set-output N=text) so the tasks after it run again, or kick off a new run for new inputs",
  flow: 're-run one of its methods and those after it from a saved state (rerunFrom, crewline checkpoint flows rerun --from METHOD), or kick off a new run for new inputs',
  agent: 'kick off the agent again for new inputs',
};

/**
 * Refuses a continuation before anything runs when its inputs name one the run does not know (a
 * typo would change nothing and the run would still pay for its model calls), or when nothing would
 * run: a fork of a finished run — or a resume of one with edits — that would write no checkpoint,
 * make no branch and give back the old output. `document` has the edited outputs applied.
 */
export function checkContinuation(document: CheckpointDocument, request: ContinuationRequest): void {
  const id = document.metadata.id;
  checkInputsKnown(document, request.inputs);
  const reason = nothingLeftToRun(document);
  if (reason === undefined) return;
  const edited =
    changesInputs(savedInputs(document), request.inputs) || Object.keys(request.taskOutputs ?? {}).length > 0;
  // A plain resume of a finished run gives its output back, as it always has; it creates nothing.
  if (request.mode === 'resume' && !edited) return;
  const kind = document.entities[0]!.kind;
  throw new CrewlineError(
    'runtime',
    'invalid_argument',
    `checkpoint ${id}: nothing to run: ${reason} and no edit makes one run again (changed inputs only reach work that has not run), so the ${request.mode} would write no checkpoint${request.mode === 'fork' ? ' and make no branch' : ''}; ${howToRunAgain[kind]}`,
  );
}

/**
 * Refuses inputs that name one the run does not know (not a kickoff input, a `{placeholder}` of its
 * templates nor a key of a flow's state): a typo would change nothing and the run would still pay
 * for its model calls. Part of `checkContinuation`; alone for what only plans a continuation.
 */
export function checkInputsKnown(
  document: CheckpointDocument,
  inputs: Readonly<Record<string, unknown>> | undefined,
): void {
  if (inputs === undefined) return;
  const unknown = findUnknownInput(document, inputs);
  if (unknown === undefined) return;
  throw new CrewlineError(
    'runtime',
    'invalid_argument',
    `checkpoint ${document.metadata.id}: input "${unknown.key}" is not one the run knows (known: ${unknown.known.join(', ') || 'none'}); check its spelling (inputs, --input), or kick off a new run for new inputs`,
  );
}
