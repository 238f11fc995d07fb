// The answer to `POST /api/checkpoints/:id/plan`: what a resume or fork of a checkpoint from the page
// would run, with the page's edited outputs and inputs, refused as the run itself would refuse it.
// Split from explorer-server.ts, which routes the request here.
import { parseAssignments } from '../core/args.js';
import { checkBeforeRunning } from '../core/check-before-running.js';
import { usageError } from '../core/cli-error.js';
import { type ContinuationPlan, planContinuation } from '../core/continuation-plan.js';
import { continuedInputs } from '../core/continued-inputs.js';
import type { DocumentView } from '../core/document-view.js';
import { newerHeadOf } from '../core/newer-head.js';
import { runAgainWordsOfPage } from '../core/nothing-to-run.js';
import type { OpenedLocation } from '../core/open-location.js';
import { parseTaskOutputs } from '../core/task-outputs.js';

/** A plan request's body, checked: the page's edited outputs and inputs, and resume or fork. */
export interface PlanRequest {
  outputs: string[] | undefined;
  inputs: string[] | undefined;
  mode: 'resume' | 'fork';
}

/** Checks a plan request's body (before its checkpoint is read); a usage error names what is wrong. */
export function parsePlanRequest(requestBody: unknown): PlanRequest {
  const body = requestBody as {
    outputs?: unknown;
    inputs?: unknown;
    mode?: unknown;
  } | null;
  const outputs = body?.outputs;
  if (outputs !== undefined && (!Array.isArray(outputs) || outputs.some((item) => typeof item !== 'string')))
    throw usageError('outputs must be a list of strings like "N=text"');
  // The inputs the run form would send to /api/runs, read the same way: a changed one starts the
  // interrupted task over, and the plan says so before the run is started.
  const inputs = body?.inputs;
  if (inputs !== undefined && (!Array.isArray(inputs) || inputs.some((item) => typeof item !== 'string')))
    throw usageError('inputs must be a list of strings like "key=value" or "key:=<json>"');
  // Without a mode, what a resume would refuse: what both refuse (an edit or input that changes
  // nothing), not the fork's refusal of a finished run left as it is, which a resume gives back.
  const mode = body?.mode ?? 'resume';
  if (mode !== 'resume' && mode !== 'fork') throw usageError('mode must be "resume" or "fork"');
  return { outputs: outputs as string[] | undefined, inputs: inputs as string[] | undefined, mode };
}

/** The plan of continuing the checkpoint `shown` as `request` asks, in `opened`. */
export async function planOfRequest(
  request: PlanRequest,
  shown: DocumentView,
  opened: OpenedLocation,
): Promise<ContinuationPlan> {
  const { outputs, inputs, mode } = request;
  const inputChanges = parseAssignments('--input', inputs);
  // What /api/runs sends the run (a flow: the changes alone), so the plan is of that run.
  const inputsGiven = continuedInputs(shown, inputChanges);
  const taskOutputs = parseTaskOutputs(outputs, shown);
  // Refused as /api/runs refuses it (the runtime's own check): a misspelt input, an edit that
  // reaches nothing or a continuation with nothing to run — a plan of it would promise a run that is
  // never started.
  checkBeforeRunning(
    shown.document,
    {
      mode,
      ...(inputsGiven ? { inputs: inputsGiven } : {}),
      ...(taskOutputs ? { taskOutputs } : {}),
    },
    runAgainWordsOfPage,
  );
  // A resume of a checkpoint its run went past moves to a new branch and pays again for what the
  // run did since: said in the plan, before the user confirms, as the runtime warns when it moves.
  const newerHead =
    mode === 'resume'
      ? await newerHeadOf(opened.provider, opened.location, shown.document.metadata)
      : undefined;
  return planContinuation(shown, outputs, inputsGiven, {
    ...(newerHead ? { newerHead } : {}),
  });
}
