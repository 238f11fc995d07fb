import { parseCommandArguments } from '../core/args.js';
import { diffCheckpoints, formatDiff, taskChangeJson } from '../core/checkpoint-diff.js';
import type { CliContext } from '../core/cli-context.js';
import { usageError } from '../core/cli-error.js';
import { commandName } from '../core/command-name.js';
import { viewDocument } from '../core/document-view.js';
import { printable } from '../core/format.js';
import { jsonDocument } from '../core/json-output.js';
import { openCheckpoint } from '../core/open-location.js';
import { providersOf } from '../core/providers.js';

/** `crewline checkpoint diff A B [--full]`: changed outputs as line diffs (`--full`: every line, whole). */
export async function run(args: readonly string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArguments(
    'checkpoint diff',
    args,
    { location: { type: 'string' }, json: { type: 'boolean' }, full: { type: 'boolean' } },
    2,
    commandName(context.env, context.cwd),
  );
  const [first, second] = positionals;
  if (first === undefined || second === undefined) {
    throw usageError(
      `diff needs two checkpoints: ${commandName(context.env, context.cwd)} checkpoint diff A B (ids, files or path#id)`,
    );
  }
  const providers = await providersOf(context);
  const command = commandName(context.env, context.cwd);
  const a = await openCheckpoint(first, context.cwd, providers, values.location, command);
  const b = await openCheckpoint(second, context.cwd, providers, values.location, command);
  const diff = diffCheckpoints(viewDocument(a.document), viewDocument(b.document));
  if (values.json) {
    context.stdout.write(jsonDocument({ ...diff, tasks: diff.tasks.map(taskChangeJson) }));
    return 0;
  }
  const width = Math.max(60, Math.min(context.stdout.columns ?? 100, 160));
  context.stdout.write(printable(`${formatDiff(diff, width, { full: values.full === true }).join('\n')}\n`));
  return 0;
}
