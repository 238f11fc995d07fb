import { parseCommandArguments } from '../core/args.js';
import type { CliContext } from '../core/cli-context.js';
import { formatColumns, formatTime, printable } from '../core/format.js';
import { jsonDocument } from '../core/json-output.js';
import { displayPath } from '../core/location.js';
import { openLocation } from '../core/open-location.js';
import { providersOf } from '../core/providers.js';

/** `crewline checkpoint flows [LOCATION]`: saved flow state ids, newest first. */
export async function run(args: readonly string[], context: CliContext): Promise<number> {
  if (args[0] === 'rerun') return (await import('./flows-rerun.js')).runRerun(args.slice(1), context);
  const { values, positionals } = parseCommandArguments(
    'checkpoint flows',
    args,
    { location: { type: 'string' }, flow: { type: 'string' }, json: { type: 'boolean' } },
    1,
  );
  const opened = await openLocation(
    positionals[0] ?? values.location,
    context.cwd,
    await providersOf(context),
  );
  // The runtime knows how flows store their state; it is loaded only for this command.
  const { listFlowStates } = await import('@crewline/runtime');
  const states = await listFlowStates(opened.location, {
    provider: opened.provider,
    ...(values.flow !== undefined ? { flowName: values.flow } : {}),
  });
  if (values.json) {
    context.stdout.write(jsonDocument({ location: opened.location, provider: opened.kind, states }));
    return 0;
  }
  const where = displayPath(opened.location, context.cwd);
  if (states.length === 0) {
    context.stdout.write(printable(`No flow states in ${where} (${opened.kind})\n`));
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
      `${states.length} flow state${states.length === 1 ? '' : 's'} in ${where} (${opened.kind}), newest first\n\n${formatColumns(rows).join('\n')}\n\nRestore one with flow.kickoff({ inputs: { id: '<state id>' } }); re-run a step and what follows with crewline checkpoint flows rerun <state id> --from <method>.\n`,
    ),
  );
  return 0;
}
