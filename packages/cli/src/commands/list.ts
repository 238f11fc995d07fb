import { parseCommandArguments } from '../core/args.js';
import type { CliContext } from '../core/cli-context.js';
import { formatBytes, formatColumns, formatTime } from '../core/format.js';
import { displayPath } from '../core/location.js';
import { openLocation } from '../core/open-location.js';
import { formatEntities } from '../core/summaries.js';

/** `crewline checkpoint list [LOCATION]`. */
export async function run(args: readonly string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArguments(
    'checkpoint list',
    args,
    { location: { type: 'string' }, branch: { type: 'string' }, json: { type: 'boolean' } },
    1,
  );
  const opened = await openLocation(positionals[0] ?? values.location, context.cwd, context.catalog);
  const checkpoints = await opened.provider.list(
    opened.location,
    values.branch === undefined ? undefined : { branch: values.branch },
  );
  const where = displayPath(opened.location, context.cwd);
  if (values.json) {
    context.stdout.write(
      `${JSON.stringify({ location: opened.location, provider: opened.kind, count: checkpoints.length, checkpoints }, null, 2)}\n`,
    );
    return 0;
  }
  if (checkpoints.length === 0) {
    context.stdout.write(
      `No checkpoints in ${where} (${opened.kind})${values.branch === undefined ? '' : ` on branch ${values.branch}`}\n`,
    );
    return 0;
  }
  const rows = [
    ['ID', 'TIME', 'SIZE', 'TRIGGER', 'BRANCH', 'PROGRESS'],
    ...checkpoints.map((checkpoint) => [
      checkpoint.id,
      formatTime(checkpoint.createdAt),
      formatBytes(checkpoint.sizeBytes),
      checkpoint.trigger,
      checkpoint.branch,
      formatEntities(checkpoint.entities),
    ]),
  ];
  const count = `${checkpoints.length} checkpoint${checkpoints.length === 1 ? '' : 's'}`;
  context.stdout.write(
    `${count} in ${where} (${opened.kind}), oldest first\n\n${formatColumns(rows).join('\n')}\n`,
  );
  return 0;
}
