import { CrewlineError } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { shellWord } from '@crewline/runtime-state/internal';
import { parseCommandArguments } from '../core/args.js';
import type { CliContext } from '../core/cli-context.js';
import { cliError, usageError } from '../core/cli-error.js';
import { commandName } from '../core/command-name.js';
import { continueRun } from '../core/continue-run.js';
import { viewDocument } from '../core/document-view.js';
import { entityLabel } from '../core/entity-label.js';
import { printable, shortCheckpointId } from '../core/format.js';
import { reportInterrupt } from '../core/interrupt-report.js';
import { jsonDocument } from '../core/json-output.js';
import { displayPath } from '../core/location.js';
import { locationOption } from '../core/location-option.js';
import { type OpenedLocation, openLocation } from '../core/open-location.js';
import { pauseLines } from '../core/pause-lines.js';
import { isPersistedStateBranch } from '../core/persisted-branch.js';
import { loadProject } from '../core/project-config.js';
import { providersOf } from '../core/providers.js';

/**
 * `crewline checkpoint flows rerun <STATE ID> --from <METHOD>`: runs that method of a saved flow
 * state again, and everything after it, from the state's save made before the method (the runtime's
 * `findRerunPoint`, the same as `kickoff({ inputs: { id }, rerunFrom })`).
 */
export async function runRerun(args: readonly string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArguments(
    'checkpoint flows rerun',
    args,
    {
      from: { type: 'string' },
      location: { type: 'string' },
      flow: { type: 'string' },
      quiet: { type: 'boolean' },
      json: { type: 'boolean' },
    },
    1,
    commandName(context.env, context.cwd),
  );
  const stateId = positionals[0];
  const where = locationOption(values.location, context.cwd);
  const command = commandName(context.env, context.cwd);
  if (stateId === undefined)
    throw usageError(`give the state id to re-run (\`${command} checkpoint flows${where}\` lists them)`);
  // The project's registrations come first: a broken config is reported before anything runs.
  await loadProject(context.cwd);
  const providers = await providersOf(context);
  const opened = await openLocation(values.location, context.cwd, providers);
  const runtime = await import('@crewline/runtime');
  const flowOptions = {
    provider: opened.provider,
    ...(values.flow !== undefined ? { flowName: values.flow } : {}),
  };
  const method = values.from;
  if (method === undefined || method.length === 0) {
    // An example only from this state's own methods ("e.g. --from draft" named a method of another
    // flow), and one it can re-run from: a save comes before it (the first method has none).
    const history = await runtime.listFlowStateHistory(opened.location, stateId, flowOptions);
    const methods = [...new Set(history.flatMap((entry) => entry.completedMethods))].filter((name) =>
      history.some((entry) => !entry.completedMethods.includes(name)),
    );
    throw usageError(
      `give the method to re-run from with --from <method>${
        methods.length === 0
          ? ''
          : `, e.g. --from ${shellWord(methods[0]!)} (flow state "${stateId}" can re-run from ${methods.join(', ')})`
      }`,
    );
  }
  const point = await runtime
    .findRerunPoint(opened.location, stateId, method, flowOptions)
    .catch(async (error: unknown) => {
      if (!CrewlineError.isInstance(error) || error.code !== 'not_found') throw error;
      throw await stateNotFound(stateId, opened, values.location, context.cwd, command, error);
    });
  const out = values.json ? () => undefined : (line: string) => context.stdout.write(printable(`${line}\n`));
  out(`Re-running flow state ${stateId} from ${method}`);
  out(
    `  restoring ${displayPath(point.reference, context.cwd)} (completed: ${point.completedMethods.join(', ') || 'nothing'})`,
  );
  // Ctrl+C says where the re-run stopped and how to continue it, as resume and fork do.
  const interruptReport = reportInterrupt({
    mode: 'rerun',
    from: point.checkpointId,
    cwd: context.cwd,
    command,
    stderr: context.stderr,
    onWayOut: () => providers.closeNow(),
  });
  // Its tasks: progress lines number them as info does.
  const { tasks } = viewDocument(await readDocument(opened.provider, opened.location, point.checkpointId));
  const outcome = await continueRun({
    reference: point.reference,
    tasks,
    mode: 'resume',
    // The method runs from scratch (crews it had started when the save was taken are not continued),
    // its later saves on a branch of their own, which it says itself ("forked onto branch …").
    rerunFrom: method,
    cwd: context.cwd,
    providers,
    width: Math.max(60, Math.min(context.stdout.columns ?? 100, 160)),
    ...(values.quiet || values.json ? {} : { onLine: (line: string) => out(`  ${line}`) }),
    onCheckpoint: (checkpoint) => interruptReport.noteCheckpoint(checkpoint),
  }).finally(() => interruptReport.stop());
  if (values.json) {
    context.stdout.write(
      jsonDocument({
        stateId,
        from: method,
        restored: point.reference,
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
    // The command that answers, as resume and fork say it.
    for (const line of pauseLines({ ...outcome, pause: outcome.pause }, context.cwd, command)) out(line);
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
 * The refusal for a state id with no saves in the location. A run of a flow checkpointed without
 * `@persist` has no state saves, only plain checkpoints: when the id names such a run (its flow id or
 * a prefix of it, its run id, one of its checkpoint ids), say so and name the commands that continue
 * it. The runtime's message said "no saves of flow state" only.
 */
async function stateNotFound(
  stateId: string,
  opened: OpenedLocation,
  givenLocation: string | undefined,
  cwd: string,
  command: string,
  cause: CrewlineError,
): Promise<CrewlineError> {
  const where = locationOption(givenLocation, cwd);
  const shown = displayPath(opened.location, cwd);
  const named = (await opened.provider.list(opened.location)).filter(
    (checkpoint) =>
      checkpoint.id === stateId ||
      shortCheckpointId(checkpoint.id) === stateId ||
      checkpoint.lineageId.startsWith(stateId) ||
      checkpoint.entities.some((entity) => entity.kind === 'flow' && entity.id.startsWith(stateId)),
  );
  const flow = named.flatMap((checkpoint) => checkpoint.entities).find((entity) => entity.kind === 'flow');
  const last = named.at(-1);
  if (
    flow === undefined ||
    last === undefined ||
    named.some((checkpoint) => isPersistedStateBranch(checkpoint.branch))
  ) {
    return cliError(
      'not_found',
      `no saves of flow state "${stateId}" in ${shown}; list the saved states with ${command} checkpoint flows${where}`,
      { cause },
    );
  }
  return cliError(
    'not_found',
    `flow ${flow.name} of "${stateId}" is not @persist: its saves in ${shown} are plain checkpoints, which flows rerun does not take; continue its last with ${command} checkpoint resume ${shortCheckpointId(last.id)}${where}, or run again from an earlier one with ${command} checkpoint fork <checkpoint id>${where} (${command} checkpoint list${where} lists them)`,
    { cause },
  );
}
