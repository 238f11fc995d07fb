import { shellWord } from '@crewline/runtime-state/internal';
import { parseCommandArguments } from '../core/args.js';
import { checkBranchExists, checkRunExists } from '../core/branch-check.js';
import type { CliContext } from '../core/cli-context.js';
import { commandName } from '../core/command-name.js';
import {
  formatBytes,
  formatColumns,
  formatTime,
  printable,
  shortCheckpointId,
  shortRunId,
} from '../core/format.js';
import { jsonDocument } from '../core/json-output.js';
import { displayPath, otherDefaultStore } from '../core/location.js';
import { locationOption } from '../core/location-option.js';
import { openLocation } from '../core/open-location.js';
import { providersOf } from '../core/providers.js';
import { formatEntities } from '../core/summaries.js';
import { listWithUnreadable, missingParentIds, unreadableCause } from '../core/unreadable-checkpoint.js';

/**
 * `crewline checkpoint list [LOCATION] [--branch B] [--run R]`. The RUN column tells apart separate
 * runs that share a branch (a run is a lineage: a kickoff and its resumptions; `--run` takes a prefix).
 */
export async function run(args: readonly string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArguments(
    'checkpoint list',
    args,
    {
      location: { type: 'string' },
      branch: { type: 'string' },
      run: { type: 'string' },
      json: { type: 'boolean' },
    },
    1,
    commandName(context.env, context.cwd),
  );
  const opened = await openLocation(
    positionals[0] ?? values.location,
    context.cwd,
    await providersOf(context),
  );
  const listing = await listWithUnreadable(
    opened.provider,
    opened.location,
    values.branch === undefined ? undefined : { branch: values.branch },
  );
  const listed = listing.checkpoints;
  // No checkpoint on the branch asked for: a typo is refused with the branches there are, as by
  // prune. The whole location is read only then (a listing of one branch does not show the others);
  // a damaged checkpoint's branch cannot be read, so the branch may be its: then it is not refused.
  if (values.branch !== undefined && listed.length === 0 && listing.unreadable.length === 0) {
    const all = await opened.provider.list(opened.location);
    checkBranchExists(all, values.branch, displayPath(opened.location, context.cwd));
  }
  const checkpoints =
    values.run === undefined ? listed : listed.filter((entry) => entry.lineageId.startsWith(values.run!));
  // A --run that names no run here is refused as by prune; one whose checkpoints are all on other
  // branches than --branch is an empty result.
  if (values.run !== undefined && checkpoints.length === 0 && listing.unreadable.length === 0) {
    const all = values.branch === undefined ? listed : await opened.provider.list(opened.location);
    checkRunExists(
      all,
      values.run,
      displayPath(opened.location, context.cwd),
      commandName(context.env, context.cwd),
    );
  }
  // A damaged checkpoint's run cannot be read from it: it belongs to no run --run names.
  const damaged = values.run === undefined ? listing.unreadable : [];
  const where = displayPath(opened.location, context.cwd);
  // Without a location the first default store is listed; the other one, when it exists too, would
  // otherwise stay out of sight (and its ids would be "not found" to every command).
  const other = otherDefaultStore(context.cwd, positionals[0] ?? values.location);
  // Named as the CLI was run (`npx crewline`, `pnpm crewline`), as every other hint does.
  const otherNote =
    other === undefined
      ? ''
      : printable(
          `\n${displayPath(other, context.cwd)} exists here too; list it with ${commandName(context.env, context.cwd)} list ${shellWord(displayPath(other, context.cwd))}\n`,
        );
  if (values.json) {
    context.stdout.write(
      jsonDocument({
        location: opened.location,
        provider: opened.kind,
        count: checkpoints.length,
        checkpoints,
        unreadable: damaged,
      }),
    );
    return 0;
  }
  if (checkpoints.length === 0 && damaged.length === 0) {
    const scope = [
      values.branch === undefined ? '' : ` on branch ${values.branch}`,
      values.run === undefined ? '' : ` of run ${values.run}`,
    ].join('');
    context.stdout.write(`${printable(`No checkpoints in ${where} (${opened.kind})${scope}\n`)}${otherNote}`);
    return 0;
  }
  // Children per parent over the whole listing: two checkpoints that continue one (two resumes of
  // it, or a fork and the run going on) are siblings, and the PARENT column says so.
  const children = new Map<string, number>();
  for (const checkpoint of [...listed, ...listing.unreadable])
    if (checkpoint.parentId !== null && checkpoint.parentId !== undefined)
      children.set(checkpoint.parentId, (children.get(checkpoint.parentId) ?? 0) + 1);
  const ids = new Set(listed.map((checkpoint) => checkpoint.id));
  const unreadable = new Set(listing.unreadable.map((checkpoint) => checkpoint.id));
  // Only a listing of the whole location can tell that a parent is missing from it: pruned (gone),
  // or still stored but unreadable (a damaged checkpoint a provider without `listWithUnreadable`
  // left out, with a warning).
  if (values.branch === undefined) {
    const missing = [...missingParentIds(checkpoints, listed)].filter(
      (parentId) => !unreadable.has(parentId),
    );
    await Promise.all(
      missing.map(async (parentId) => {
        if ((await unreadableCause(opened.provider, opened.location, parentId)) !== undefined)
          unreadable.add(parentId);
      }),
    );
  }
  const parentCell = (parentId: string | null | undefined): string => {
    if (parentId === null || parentId === undefined) return '-';
    const siblings = (children.get(parentId) ?? 1) - 1;
    const missing = values.branch === undefined && !ids.has(parentId);
    const mark = !missing ? '' : unreadable.has(parentId) ? ' (unreadable)' : ' (pruned)';
    return `${shortCheckpointId(parentId)}${mark}${
      siblings > 0 ? ` (+${siblings} sibling${siblings === 1 ? '' : 's'})` : ''
    }`;
  };
  // A damaged checkpoint gets its row and its id (what `info` takes to name the cause), in id order.
  const entries = [
    ...checkpoints.map((checkpoint) => ({
      id: checkpoint.id,
      cells: [
        checkpoint.id,
        formatTime(checkpoint.createdAt),
        formatBytes(checkpoint.sizeBytes),
        checkpoint.trigger,
        checkpoint.branch,
        parentCell(checkpoint.parentId),
        shortRunId(checkpoint.lineageId),
        formatEntities(checkpoint.entities),
      ],
    })),
    ...damaged.map((checkpoint) => ({
      id: checkpoint.id,
      cells: [
        checkpoint.id,
        formatTime(timeOfId(checkpoint.id)),
        formatBytes(checkpoint.sizeBytes),
        '-',
        checkpoint.branch,
        parentCell(checkpoint.parentId),
        '-',
        '(unreadable)',
      ],
    })),
  ].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const rows = [
    ['ID', 'TIME', 'SIZE', 'TRIGGER', 'BRANCH', 'PARENT', 'RUN', 'PROGRESS'],
    // Stored strings are escaped cell by cell, so the columns line up around an escaped control.
    ...entries.map((entry) => entry.cells.map((cell) => printable(cell, false))),
  ];
  const runs = new Set(checkpoints.map((checkpoint) => checkpoint.lineageId)).size;
  const count = `${checkpoints.length} checkpoint${checkpoints.length === 1 ? '' : 's'} of ${runs} run${runs === 1 ? '' : 's'}${
    damaged.length === 0
      ? ''
      : ` and ${damaged.length} unreadable (\`${commandName(context.env, context.cwd)} checkpoint info ID${locationOption(positionals[0] ?? values.location, context.cwd)}\` says why)`
  }`;
  context.stdout.write(
    `${printable(`${count} in ${where} (${opened.kind}), oldest first`)}\n\n${formatColumns(rows).join('\n')}\n${otherNote}`,
  );
  return 0;
}

/** The time a checkpoint id starts with (`20261127T060154406-…`, UTC), for a checkpoint that cannot be read. */
function timeOfId(id: string): string {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})-/.exec(id);
  return match ? `${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}.${match[7]}Z` : '-';
}
