import {
  asksForLatest,
  type ContinuedSinceReadAdvice,
  changesInputs,
  givesRedactedAgain,
} from '@crewline/runtime/internal';
import { isValidBranchName, type LoadedCheckpoint } from '@crewline/runtime-state';
import { branchNameRule, shellWord } from '@crewline/runtime-state/internal';
import { parseAssignments, parseCommandArguments } from '../core/args.js';
import { branchTaken } from '../core/branch-taken.js';
import { checkBeforeRunning } from '../core/check-before-running.js';
import type { CliContext } from '../core/cli-context.js';
import { usageError } from '../core/cli-error.js';
import { commandName } from '../core/command-name.js';
import { planContinuation } from '../core/continuation-plan.js';
import { continueRun } from '../core/continue-run.js';
import { continuedInputs } from '../core/continued-inputs.js';
import { continuedSinceReadInWords } from '../core/continued-since-read.js';
import { type DocumentView, primaryEntity, viewDocument } from '../core/document-view.js';
import { entityLabel } from '../core/entity-label.js';
import { printable, truncate } from '../core/format.js';
import { reportInterrupt } from '../core/interrupt-report.js';
import { jsonDocument } from '../core/json-output.js';
import { leaseHeld, leaseWordsOfCommandLine } from '../core/lease-held.js';
import { displayPath, normalizeReference } from '../core/location.js';
import { openCheckpoint } from '../core/open-location.js';
import { pauseLines } from '../core/pause-lines.js';
import { loadProject } from '../core/project-config.js';
import { providersOf } from '../core/providers.js';
import { formatEntities } from '../core/summaries.js';
import { parseTaskOutputs } from '../core/task-outputs.js';

import { refuseTakenBranch } from './taken-branch.js';

const renameWithFlag = 'choose another name with --branch or omit it to generate one';

/**
 * An --answer to a flow that does not wait for one is a mistake in the command line (exit code 2),
 * said before anything runs; the runtime would refuse it only once the flow was restored. A
 * checkpoint without a flow is left to the runtime, which says an answer only continues a flow.
 */
function refuseAnswerNotAwaited(answer: string | undefined, view: DocumentView): void {
  if (answer === undefined) return;
  const flow = primaryEntity(view.entities);
  if (flow?.kind !== 'flow' || flow.pause !== undefined) return;
  throw usageError(
    `${entityLabel('flow', flow.name)} does not wait for an answer in this checkpoint (${flow.status ?? 'not paused'}), so --answer has nothing to answer; drop --answer`,
  );
}

/**
 * Whether this command read the checkpoint as the latest of its run: a location (a directory, a
 * database, a URL, or none: the default one) asks for its latest, by the runtime's own rule. The
 * runtime, handed the id the command resolved, would otherwise judge it again from the store and find
 * "not the latest" when a continuation landed in between (review of fixes, CRITICAL): it refuses such
 * a resume (exit code 1) rather than moving to a new branch and paying again. A checkpoint named by
 * its id the runtime judges itself, right after it reads it.
 */
function readAsLatestFrom(
  reference: string | undefined,
  cwd: string,
  location: string | undefined,
  loaded: LoadedCheckpoint,
): boolean {
  return asksForLatest(normalizeReference(reference, cwd, location).reference, loaded.provider);
}

/** `crewline checkpoint resume|fork [REF]`: runs the continuation with progress lines. */
export async function runContinueCommand(
  mode: 'resume' | 'fork',
  args: readonly string[],
  context: CliContext,
): Promise<number> {
  const { values, positionals } = parseCommandArguments(
    `checkpoint ${mode}`,
    args,
    {
      location: { type: 'string' },
      input: { type: 'string', multiple: true },
      'set-output': { type: 'string', multiple: true },
      answer: { type: 'string' },
      'on-conflict': { type: 'string' },
      quiet: { type: 'boolean' },
      json: { type: 'boolean' },
      ...(mode === 'fork' ? { branch: { type: 'string' } } : {}),
    },
    1,
    commandName(context.env, context.cwd),
  );
  // An empty argument is most often a script's empty variable: taken as "the latest", it continued
  // (and wrote into) whichever run of the location was newest (deploy trial).
  if (positionals[0] !== undefined && positionals[0].trim() === '')
    throw usageError(
      `checkpoint ${mode}: the checkpoint reference is empty; give a checkpoint id or a location, or leave it out to ${mode} the latest`,
    );
  const branch = mode === 'fork' ? (values as { branch?: string }).branch : undefined;
  // Checked before anything is said: no "Forking ... onto branch bad name" above the refusal.
  if (branch !== undefined && !isValidBranchName(branch))
    throw usageError(`--branch ${JSON.stringify(branch)} is not allowed; ${branchNameRule}`);
  const inputChanges = parseAssignments('--input', values.input);
  const onConflict = values['on-conflict'];
  if (onConflict !== undefined && onConflict !== 'error' && onConflict !== 'fork')
    throw usageError(`--on-conflict must be "error" or "fork", not ${JSON.stringify(onConflict)}`);
  // The project's registrations come first: a broken config is reported before anything runs.
  await loadProject(context.cwd);
  const providers = await providersOf(context);
  const loaded = await openCheckpoint(
    positionals[0],
    context.cwd,
    providers,
    values.location,
    commandName(context.env, context.cwd),
  );
  const view = viewDocument(loaded.document);
  const readAsLatest =
    mode === 'resume' && readAsLatestFrom(positionals[0], context.cwd, values.location, loaded);
  const taskOutputs = parseTaskOutputs(values['set-output'], view);
  const { metadata } = loaded.document;
  const inputs = continuedInputs(view, inputChanges);
  refuseAnswerNotAwaited(values.answer, view);
  // Refused before the heading: no "Forking ..." line for a fork that does not happen.
  checkBeforeRunning(loaded.document, {
    mode,
    ...(inputs ? { inputs } : {}),
    ...(taskOutputs ? { taskOutputs } : {}),
  });
  await refuseTakenBranch(
    { provider: loaded.provider, location: loaded.location, branch, cwd: context.cwd },
    renameWithFlag,
  );
  // With --json, stdout is one JSON document written at the end: no progress or heading lines.
  const out = values.json ? () => undefined : (line: string) => context.stdout.write(printable(`${line}\n`));
  const width = Math.max(60, Math.min(context.stdout.columns ?? 100, 160));
  // --quiet: the result only, so no heading either. The heading and the plan wait for the run to
  // start: a refusal found only as it starts (a run another process holds, a model no config
  // registers) is then said alone, not under a "Resuming …" for a run that never ran.
  let waitingHeading: string[] | undefined = [];
  const heading = values.quiet ? () => undefined : (line: string) => waitingHeading?.push(line);
  const printHeading = () => {
    for (const line of waitingHeading ?? []) out(line);
    waitingHeading = undefined;
  };
  heading(
    `${mode === 'resume' ? 'Resuming' : 'Forking'} ${metadata.id} (branch ${metadata.branch}, ${formatEntities(metadata.entities)})`,
  );
  heading(
    `  from ${displayPath(loaded.checkpoint.reference, context.cwd)}${branch ? ` onto branch ${branch}` : ''}`,
  );
  if (taskOutputs)
    heading(
      `  replaced outputs: ${Object.keys(taskOutputs)
        .map((index) => `task ${Number(index) + 1}`)
        .join(', ')}`,
    );
  if (inputChanges) {
    // An --input that repeats the saved value changes nothing: not announced as a change. Nor is a
    // credential saved as [REDACTED] given again (the runtime's rule, `changesInputs`): the run had
    // it, the checkpoint could not hold it; said as given again (review RC-2).
    const keys = Object.keys(inputChanges);
    const changed = keys.filter((key) => changesInputs(view.inputs, { [key]: inputChanges[key] }));
    // By the runtime's rule too (review RG-6): a value equal to the saved one in another form (a Date
    // given as its text) is as saved, not a credential.
    const givenAgain = keys.filter(
      (key) => !changed.includes(key) && givesRedactedAgain(view.inputs, { [key]: inputChanges[key] }),
    );
    const same = keys.filter((key) => !changed.includes(key) && !givenAgain.includes(key));
    if (changed.length > 0) heading(`  changed inputs: ${changed.join(', ')}`);
    if (givenAgain.length > 0)
      heading(`  credentials given again (saved as [REDACTED], no change): ${givenAgain.join(', ')}`);
    if (same.length > 0) heading(`  inputs as saved: ${same.join(', ')}`);
  }
  // What the explorer's plan says of a task the run was interrupted in, before anything runs. Not a
  // restart: the runtime warns of that as the crew kicks off (on stderr, --quiet and --json too),
  // and saying it here as well would say it twice.
  const plan = planContinuation(view, values['set-output'], inputs);
  for (const task of plan.runs)
    if (task.savedCalls !== undefined && task.reason !== 'restarted')
      heading(`  task ${task.number} ${task.name ?? truncate(task.description, 40)} ${task.note}`);
  // A flow's methods, as the plan says them: which it keeps and which run (their tasks are not all
  // in the checkpoint yet).
  if (plan.flow) heading(`  ${plan.flow.note}`);
  if (values.answer !== undefined) heading(`  answer: ${truncate(values.answer, 60)}`);
  const interruptReport = reportInterrupt({
    mode,
    from: metadata.id,
    cwd: context.cwd,
    command: commandName(context.env, context.cwd),
    stderr: context.stderr,
    // Killed by the signal, the process would close nothing: SQLite's last commits stayed in the WAL.
    // The registry closes the providers it rebuilt with a checkpoint's own options too (the run
    // writes through one of those when the checkpoint stored, say, synchronous 'full').
    onWayOut: () => providers.closeNow(),
  });
  const outcome = await inCliWords(
    continueRun({
      reference: loaded.checkpoint.reference,
      mode,
      cwd: context.cwd,
      providers,
      width,
      tasks: view.tasks,
      ...(branch !== undefined ? { branch } : {}),
      ...(inputs ? { inputs } : {}),
      ...(taskOutputs ? { taskOutputs } : {}),
      ...(values.answer !== undefined ? { humanInput: values.answer } : {}),
      ...(onConflict !== undefined ? { onConflict } : {}),
      ...(readAsLatest ? { readAsLatest } : {}),
      ...(values.quiet || values.json
        ? {}
        : {
            onLine: (line: string) => {
              printHeading();
              out(`  ${line}`);
            },
          }),
      onCheckpoint: (checkpoint) => interruptReport.noteCheckpoint(checkpoint),
    }),
    {
      branch,
      location: displayPath(loaded.location, context.cwd),
      command: commandName(context.env, context.cwd),
    },
  ).finally(() => interruptReport.stop());
  // A run that said nothing on its way (nothing left to run, say) still gets its heading.
  printHeading();
  if (values.json) {
    context.stdout.write(
      jsonDocument({
        mode,
        from: metadata.id,
        kind: outcome.kind,
        name: outcome.name,
        branch: outcome.branch,
        lastCheckpoint: outcome.lastCheckpoint ?? null,
        output: outcome.output,
        pause: outcome.pause ?? null,
      }),
    );
    return 0;
  }
  if (outcome.pause) {
    for (const line of pauseLines(
      { ...outcome, pause: outcome.pause },
      context.cwd,
      commandName(context.env, context.cwd),
    ))
      out(line);
    return 0;
  }
  out(
    `Finished ${entityLabel(outcome.kind, outcome.name)} on branch ${outcome.branch}${
      outcome.lastCheckpoint ? `; last checkpoint ${displayPath(outcome.lastCheckpoint, context.cwd)}` : ''
    }`,
  );
  out('Output:');
  out(outcome.output.length > 0 ? outcome.output : '(empty)');
  return 0;
}

/**
 * The runtime's refusals said with this command's flags: a fork onto a branch that already has
 * checkpoints names its `branch` option, here `--branch`; a lineage another process continues names
 * the `onConflict: 'fork'` option, here `--on-conflict fork`; a run continued since its checkpoint was
 * read as the latest names `restoreFrom` and `fork()`, here the commands that do them in `location`.
 */
async function inCliWords<T>(
  continuation: Promise<T>,
  at: { branch: string | undefined; location: string; command: string },
): Promise<T> {
  try {
    return await continuation;
  } catch (error) {
    throw (
      leaseHeld(error, leaseWordsOfCommandLine) ??
      continuedSinceReadInWords(error, (checkpointId, headId) =>
        commandLineAdvice(checkpointId, headId, at),
      ) ??
      branchTaken(error, at.branch, renameWithFlag) ??
      error
    );
  }
}

/** The commands that go on after a run continued since it was read, in the location it is in. */
function commandLineAdvice(
  checkpointId: string,
  headId: string,
  at: { location: string; command: string },
): ContinuedSinceReadAdvice {
  const where = shellWord(at.location);
  const crewline = at.command;
  return {
    resumeAgain: `${crewline} checkpoint resume ${where}, or ${crewline} checkpoint resume ${headId} --location ${where}`,
    forkInstead: `${crewline} checkpoint fork ${checkpointId} --location ${where}, or this command with --on-conflict fork`,
  };
}
