import type { FlowStateInfo } from '@crewline/runtime';
import { readDocument } from '@crewline/runtime-state';
import { parseFlowData } from '@crewline/runtime-state/internal';
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
 * The listed states that `@persist()` saved. A state any save of which is on a `flow-states/` branch
 * is one (the latest save alone would not do: a rerun from an earlier save continues on a branch of
 * its own). A @persist flow kicked off in another flow's method saves on that run's branch, where
 * kickoff({ inputs: { id } }) and Flow.listStates find it too: for a state on no such branch, the
 * flow's snapshot in its latest checkpoint says whether its class was persisted.
 */
async function persistedStates(
  opened: OpenedLocation,
  listed: readonly FlowStateInfo[],
): Promise<Set<FlowStateInfo>> {
  const onStateBranch = new Set<string>();
  const idByReference = new Map<string, string>();
  for (const checkpoint of await opened.provider.list(opened.location)) {
    idByReference.set(checkpoint.reference, checkpoint.id);
    if (!isPersistedStateBranch(checkpoint.branch)) continue;
    for (const entity of checkpoint.entities) {
      if (entity.kind === 'flow') onStateBranch.add(stateKey(entity.name, entity.id));
    }
  }
  const persisted = await Promise.all(
    listed.map(async (state) => {
      if (onStateBranch.has(stateKey(state.flowName, state.id))) return true;
      const id = idByReference.get(state.reference);
      return id !== undefined && (await savedAsPersisted(opened, id, state));
    }),
  );
  return new Set(listed.filter((_state, index) => persisted[index]));
}

/** Whether the state's flow snapshot in checkpoint `id` was written by a `@persist()` class. */
async function savedAsPersisted(opened: OpenedLocation, id: string, state: FlowStateInfo): Promise<boolean> {
  try {
    const document = await readDocument(opened.provider, opened.location, id);
    const snapshot = document.entities.find(
      (entity) => entity.kind === 'flow' && entity.name === state.flowName && entity.id === state.id,
    );
    return snapshot !== undefined && parseFlowData(snapshot).persisted;
  } catch {
    // A checkpoint that cannot be read is left out, as listFlowStates leaves out its last method.
    return false;
  }
}
