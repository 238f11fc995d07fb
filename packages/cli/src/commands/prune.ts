import {
  type CheckpointProvider,
  type PruneOptions,
  planPrune,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { parseCommandArguments, parseCount } from '../core/args.js';
import { checkBranchExists, checkRunExists } from '../core/branch-check.js';
import type { CliContext } from '../core/cli-context.js';
import { usageError } from '../core/cli-error.js';
import { commandName } from '../core/command-name.js';
import { parseDuration } from '../core/duration.js';
import { formatColumns, formatTime, printable, shortRunId } from '../core/format.js';
import { jsonDocument } from '../core/json-output.js';
import { displayPath } from '../core/location.js';
import { openLocation } from '../core/open-location.js';
import { providersOf } from '../core/providers.js';
import { listWithUnreadable } from '../core/unreadable-checkpoint.js';

/**
 * `crewline checkpoint prune [LOCATION] --keep N --older-than D [--dry-run]`. Counts per run (see
 * `planPrune`): with both options a checkpoint is removed only when both select it; a run's latest
 * checkpoint and every fork point always stay.
 */
export async function run(args: readonly string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArguments(
    'checkpoint prune',
    args,
    {
      location: { type: 'string' },
      keep: { type: 'string' },
      'older-than': { type: 'string' },
      branch: { type: 'string' },
      run: { type: 'string' },
      'dry-run': { type: 'boolean' },
      json: { type: 'boolean' },
    },
    1,
    commandName(context.env, context.cwd),
  );
  const keep = values.keep === undefined ? undefined : parseCount('--keep', values.keep);
  if (keep === 0) {
    throw usageError(
      '--keep must be 1 or more: prune always leaves each run its latest checkpoint; nothing was removed',
    );
  }
  const olderThanMs = values['older-than'] === undefined ? undefined : parseDuration(values['older-than']);
  if (keep === undefined && olderThanMs === undefined) {
    throw usageError(
      'prune needs --keep N and/or --older-than D (e.g. --keep 10, --older-than 7d); nothing was removed',
    );
  }
  const opened = await openLocation(
    positionals[0] ?? values.location,
    context.cwd,
    await providersOf(context),
  );
  const dryRun = values['dry-run'] === true;
  const where = displayPath(opened.location, context.cwd);
  const before = await opened.provider.list(opened.location);
  // A --branch or --run that names nothing here is a mistake in the call (exit code 2) for both,
  // not "Nothing to prune" for one and a refusal for the other.
  if (values.branch !== undefined) checkBranchExists(before, values.branch, where, '; nothing was removed');
  const lineageId =
    values.run === undefined
      ? undefined
      : findRun(before, values.run, where, commandName(context.env, context.cwd));
  const options: PruneOptions = {
    keep,
    olderThan: olderThanMs === undefined ? undefined : new Date(Date.now() - olderThanMs),
    branch: values.branch,
    lineageId,
  };
  const result = await opened.provider.prune(opened.location, { ...options, dryRun });
  const forkPoints = keptForkPoints(before, options, result.removed);
  if (values.json) {
    context.stdout.write(
      jsonDocument({
        location: opened.location,
        dryRun,
        removed: result.removed.map((checkpoint) => checkpoint.id),
        keptForkPoints: forkPoints.map(({ checkpoint }) => checkpoint.id),
      }),
    );
    return 0;
  }
  const kept = await withForksFoundSince(forkPoints, opened.provider, opened.location);
  const count = `${result.removed.length} checkpoint${result.removed.length === 1 ? '' : 's'}`;
  const keptLines =
    kept.length === 0
      ? ''
      : `Kept ${kept.length} checkpoint${kept.length === 1 ? ' that a fork starts' : 's that forks start'} from (prune never removes one):\n${formatColumns(
          kept.map(({ checkpoint, branches, unreadableForks }) => [
            `  ${checkpoint.id}`,
            formatTime(checkpoint.createdAt),
            checkpoint.branch,
            whyKept(branches, unreadableForks, context.cwd),
          ]),
        ).join('\n')}\n`;
  if (result.removed.length === 0) {
    context.stdout.write(printable(`Nothing to prune in ${where}\n${keptLines}`));
    return 0;
  }
  const rows = result.removed.map((checkpoint) => [
    `  ${checkpoint.id}`,
    formatTime(checkpoint.createdAt),
    checkpoint.branch,
    `run ${shortRunId(checkpoint.lineageId)}`,
  ]);
  context.stdout.write(
    printable(
      `${dryRun ? `Would remove ${count}` : `Removed ${count}`} from ${where}:\n${formatColumns(rows).join('\n')}\n${keptLines}${
        dryRun ? 'Nothing was removed (--dry-run).\n' : ''
      }`,
    ),
  );
  return 0;
}

/**
 * The checkpoints the retention options select but prune kept because a fork starts from them
 * (`planPrune` never removes a fork point), each with the branches forked from it. Found with
 * `planPrune` itself over the listing without the forks' links, so the rule stays in one place.
 */
function keptForkPoints(
  all: readonly StoredCheckpoint[],
  options: PruneOptions,
  removed: readonly { id: string }[],
): { checkpoint: StoredCheckpoint; branches: string[] }[] {
  const lineageOf = new Map(all.map((checkpoint) => [checkpoint.id, checkpoint.lineageId]));
  const isForkStart = (checkpoint: StoredCheckpoint) => {
    const parentLineage = checkpoint.parentId === null ? undefined : lineageOf.get(checkpoint.parentId);
    return parentLineage !== undefined && parentLineage !== checkpoint.lineageId;
  };
  const removedIds = new Set(removed.map((checkpoint) => checkpoint.id));
  return planPrune(
    all.filter((checkpoint) => !isForkStart(checkpoint)),
    options,
  )
    .filter((checkpoint) => !removedIds.has(checkpoint.id))
    .map((checkpoint) => ({
      checkpoint,
      branches: [
        ...new Set(
          all
            .filter((fork) => fork.parentId === checkpoint.id && isForkStart(fork))
            .map((fork) => fork.branch),
        ),
      ],
    }));
}

/** A checkpoint prune kept because a fork starts from it, with what it knows of the forks. */
interface KeptForkPoint {
  checkpoint: StoredCheckpoint;
  /** The branches of the forks that start from it, as listed. */
  branches: string[];
  /** Where the fork files that name it as parent but cannot be read are stored. */
  unreadableForks: string[];
}

/**
 * `kept` with the forks the listing before the prune did not show, for the checkpoints it showed
 * none of: the prune also keeps the parent a damaged fork file names (the file's name says it), and
 * the JSON provider looks at its directories again right before it removes, keeping the parent of a
 * fork written since. The location is listed again only when one of them is unexplained.
 */
async function withForksFoundSince(
  kept: readonly { checkpoint: StoredCheckpoint; branches: string[] }[],
  provider: CheckpointProvider,
  location: string,
): Promise<KeptForkPoint[]> {
  if (kept.every(({ branches }) => branches.length > 0))
    return kept.map((entry) => ({ ...entry, unreadableForks: [] }));
  const after = await listWithUnreadable(provider, location);
  return kept.map(({ checkpoint, branches }) => {
    if (branches.length > 0) return { checkpoint, branches, unreadableForks: [] };
    const forks = after.checkpoints.filter(
      (fork) => fork.parentId === checkpoint.id && fork.lineageId !== checkpoint.lineageId,
    );
    return {
      checkpoint,
      branches: [...new Set(forks.map((fork) => fork.branch))],
      unreadableForks: after.unreadable
        .filter((file) => file.parentId === checkpoint.id)
        .map((file) => file.reference),
    };
  });
}

/** The last column of a kept checkpoint's row: the branches forked from it, else why it stays. */
function whyKept(branches: readonly string[], unreadableForks: readonly string[], cwd: string): string {
  if (branches.length > 0) return `forked to ${branches.join(', ')}`;
  if (unreadableForks.length > 0) {
    const files = unreadableForks.map((reference) => displayPath(reference, cwd)).join(', ');
    return unreadableForks.length === 1
      ? `kept: a fork file that cannot be read names it as parent (${files})`
      : `kept: fork files that cannot be read name it as parent (${files})`;
  }
  // A fork the prune saw that is gone now, or a provider's own reason: no listing shows it.
  return 'kept: the prune found a fork of it that is not listed now';
}

/** The lineage id of the one run whose id starts with `prefix`; a usage error when none or several. */
function findRun(
  listed: readonly StoredCheckpoint[],
  prefix: string,
  where: string,
  command: string,
): string {
  checkRunExists(listed, prefix, where, command, '; nothing was removed');
  const runs = new Set(
    listed.map((checkpoint) => checkpoint.lineageId).filter((lineageId) => lineageId.startsWith(prefix)),
  );
  if (runs.size === 1) return [...runs][0]!;
  throw usageError(
    `run ${JSON.stringify(prefix)} is ambiguous (${[...runs].map(shortRunId).join(', ')}); give more of its id; nothing was removed`,
  );
}
