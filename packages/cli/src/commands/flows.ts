import type { FlowStateInfo } from '@crewline/runtime';
import { parseCommandArguments } from '../core/args.js';
import type { CliContext } from '../core/cli-context.js';
import { commandName } from '../core/command-name.js';
import { formatColumns, formatTime, printable } from '../core/format.js';
import { jsonDocument } from '../core/json-output.js';
import { displayPath } from '../core/location.js';
import { locationOption } from '../core/location-option.js';
import { type OpenedLocation, openLocation } from '../core/open-location.js';
import { isPersistedStateBranch } from '../core/persisted-branch.js';
import { providersOf } from '../core/providers.js';

/** `crewline checkpoint flows [LOCATION]`: saved flow state ids, newest first. */
export async function run(args: readonly string[], context: CliContext): Promise<number> {
  if (args[0] === 'rerun') return (await import('./flows-rerun.js')).runRerun(args.slice(1), context);
  const { values, positionals } = parseCommandArguments(
    'checkpoint flows',
    args,
    { location: { type: 'string' }, flow: { type: 'string' }, json: { type: 'boolean' } },
    1,
    commandName(context.env, context.cwd),
  );
  const opened = await openLocation(
    positionals[0] ?? values.location,
    context.cwd,
    await providersOf(context),
  );
  // The runtime knows how flows store their state; it is loaded only for this command.
  const { listFlowStates } = await import('@crewline/runtime');
  const listed = await listFlowStates(opened.location, {
    provider: opened.provider,
    ...(values.flow !== undefined ? { flowName: values.flow } : {}),
  });
  // The runtime lists every checkpointed flow; only @persist states restore by kickoff({ inputs: { id } })
  // (a plain flow kicked off with its id runs again from the start, every model call paid again).
  const persisted = await persistedStates(opened, listed);
  const states = listed.filter((state) => persisted.has(state));
  const plainRuns = listed.length - states.length;
  if (values.json) {
    context.stdout.write(jsonDocument({ location: opened.location, provider: opened.kind, states }));
    return 0;
  }
  const where = displayPath(opened.location, context.cwd);
  // The hints' commands name the location the user gave: followed without it, they looked elsewhere.
  const location = locationOption(positionals[0] ?? values.location, context.cwd);
  const command = commandName(context.env, context.cwd);
  const plainNote =
    plainRuns === 0
      ? ''
      : `\n${plainRuns === 1 ? '1 run of a flow' : `${plainRuns} runs of flows`} checkpointed without @persist ${plainRuns === 1 ? 'is' : 'are'} not listed: ${command} checkpoint list${location} shows ${plainRuns === 1 ? 'its' : 'their'} checkpoints; continue one with ${command} checkpoint resume <checkpoint id>${location}.\n`;
  if (states.length === 0) {
    context.stdout.write(printable(`No @persist flow states in ${where} (${opened.kind})\n${plainNote}`));
    return 0;
  }
  const rows = [
    ['STATE ID', 'FLOW', 'LAST METHOD', 'STATUS', 'UPDATED', 'CHECKPOINTS'],
    ...states.map((state) => [
      state.id,
      state.flowName,
      state.lastMethod ?? '-',
      state.status ?? '-',
      formatTime(state.updatedAt),
      String(state.checkpoints),
    ]),
  ];
  context.stdout.write(
    printable(
      `${states.length} flow state${states.length === 1 ? '' : 's'} in ${where} (${opened.kind}), newest first\n\n${formatColumns(rows).join('\n')}\n\nRestore one with flow.kickoff({ inputs: { id: '<state id>' } }); re-run a step and what follows with ${command} checkpoint flows rerun <state id> --from <method>${location}.\n${plainNote}`,
    ),
  );
  return 0;
}

function stateKey(flowName: string, stateId: string): string {
  return `${flowName}\u0000${stateId}`;
}

/**
 * The listed states that `@persist()` saved: those whose flow snapshot in their latest checkpoint says
 * its class was persisted (listFlowStates reads it), wherever they were saved — on a `flow-states/`
 * branch, or on the branch of the run a @persist flow was kicked off in (kickoff({ inputs: { id } })
 * and Flow.listStates find those too); a plain flow kicked off inside a @persist flow is not one. A
 * state whose latest checkpoint cannot be read counts as one when any save of it is on a
 * `flow-states/` branch.
 */
async function persistedStates(
  opened: OpenedLocation,
  listed: readonly FlowStateInfo[],
): Promise<Set<FlowStateInfo>> {
  const persisted = new Set(listed.filter((state) => state.persisted === true));
  const unread = listed.filter((state) => state.persisted === undefined);
  if (unread.length === 0) return persisted;
  const onStateBranch = new Set<string>();
  for (const checkpoint of await opened.provider.list(opened.location)) {
    if (!isPersistedStateBranch(checkpoint.branch)) continue;
    for (const entity of checkpoint.entities) {
      if (entity.kind === 'flow') onStateBranch.add(stateKey(entity.name, entity.id));
    }
  }
  for (const state of unread) if (onStateBranch.has(stateKey(state.flowName, state.id))) persisted.add(state);
  return persisted;
}
