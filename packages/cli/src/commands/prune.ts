import {
  type CheckpointProvider,
  type ListingWithUnreadable,
  type PruneOptions,
  planPrune,
  type StoredCheckpoint,
  type UnreadableCheckpoint,
} from '@crewline/runtime-state';
import { parseCommandArguments, parseCount } from '../core/args.js';
import { checkBranchExists, checkRunExists } from '../core/branch-check.js';
import type { CliContext } from '../core/cli-context.js';
import { usageError } from '../core/cli-error.js';
import { commandName } from '../core/command-name.js';
import { parseDuration } from '../core/duration.js';
import { describeKnownError, isCrewlineError } from '../core/error-boundary.js';
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
  // With the files a JSON listing leaves out: the prune keeps the parent a damaged fork file names,
  // and this listing already says which, so the location is not listed again on every prune while
  // that file stays.
  const listed = await listWithUnreadable(opened.provider, opened.location);
  const before = listed.checkpoints;
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
  const { kept, listingError } = await withForksFoundSince(
    keptForkPoints(before, options, result.removed),
    listed.unreadable,
    opened.provider,
    opened.location,
  );
  // The prune is done: what it removed is reported all the same.
  if (listingError !== undefined) {
    context.stderr.write(
      printable(
        `crewline: could not list ${where} again to name the forks the prune found: ${listingError}\n`,
      ),
    );
  }
  if (values.json) {
    context.stdout.write(
      jsonDocument({
        location: opened.location,
        dryRun,
        removed: result.removed.map((checkpoint) => checkpoint.id),
        keptForkPoints: kept.map(({ checkpoint }) => checkpoint.id),
      }),
    );
    return 0;
  }
  const count = `${result.removed.length} checkpoint${result.removed.length === 1 ? '' : 's'}`;
  const keptLines =
    kept.length === 0
      ? ''
      : `Kept ${kept.length} checkpoint${kept.length === 1 ? ' that a fork starts' : 's that forks start'} from (prune never removes one):\n${formatColumns(
          kept.map(({ checkpoint, branches, unreadableForks }) => [
            `  ${checkpoint.id}`,
            formatTime(checkpoint.createdAt),
            checkpoint.branch,
            whyKept(branches, unreadableForks, listingError === undefined, context.cwd),
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
    .map((checkpoint) => ({ checkpoint, branches: forkBranchesOf(checkpoint, all) }));
}

/** The branches of the forks in `listing` that start from `checkpoint`: its children in another run. */
function forkBranchesOf(checkpoint: StoredCheckpoint, listing: readonly StoredCheckpoint[]): string[] {
  return [
    ...new Set(
      listing
        .filter((child) => child.parentId === checkpoint.id && child.lineageId !== checkpoint.lineageId)
        .map((fork) => fork.branch),
    ),
  ];
}

/** The fork files in `unreadable` that name `checkpoint` as their parent, where each is stored. */
function unreadableForksOf(
  checkpoint: StoredCheckpoint,
  unreadable: readonly UnreadableCheckpoint[],
): string[] {
  return unreadable.filter((file) => file.parentId === checkpoint.id).map((file) => file.reference);
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
 * `forkPoints` with the forks the listing before the prune did not show, for the checkpoints it
 * showed none of: the prune also keeps the parent a damaged fork file names (the file's name says
 * it; `unreadable` is that listing's), and the JSON provider looks at its directories again right
 * before it removes, keeping the parent of a fork written since. The location is listed again only
 * when one of them is unexplained. A checkpoint that listing no longer holds was removed meanwhile
 * by another process (a run's `maxCheckpoints`, a second prune): it was not kept, so it is left out.
 * When that listing fails, the prune has happened all the same: its error comes back instead of
 * being thrown, and the rows stay as they were.
 */
async function withForksFoundSince(
  forkPoints: readonly { checkpoint: StoredCheckpoint; branches: string[] }[],
  unreadable: readonly UnreadableCheckpoint[],
  provider: CheckpointProvider,
  location: string,
): Promise<{ kept: KeptForkPoint[]; listingError?: string }> {
  const kept = forkPoints.map(({ checkpoint, branches }) => ({
    checkpoint,
    branches,
    unreadableForks: branches.length > 0 ? [] : unreadableForksOf(checkpoint, unreadable),
  }));
  const unexplained = (entry: KeptForkPoint) =>
    entry.branches.length === 0 && entry.unreadableForks.length === 0;
  if (!kept.some(unexplained)) return { kept };
  let after: ListingWithUnreadable;
  try {
    after = await listWithUnreadable(provider, location);
  } catch (error) {
    // Said in one line, as the error boundary says a known error (an unknown one is a bug: "Error: …").
    return { kept, listingError: isCrewlineError(error) ? describeKnownError(error) : String(error) };
  }
  const stillStored = new Set(after.checkpoints.map((checkpoint) => checkpoint.id));
  return {
    kept: kept.flatMap((entry) => {
      if (!unexplained(entry)) return [entry];
      if (!stillStored.has(entry.checkpoint.id)) return [];
      return [
        {
          checkpoint: entry.checkpoint,
          branches: forkBranchesOf(entry.checkpoint, after.checkpoints),
          unreadableForks: unreadableForksOf(entry.checkpoint, after.unreadable),
        },
      ];
    }),
  };
}

/**
 * The last column of a kept checkpoint's row: the branches forked from it, else why it stays.
 * `listedAgain` is false when the location could not be listed after the prune to find its fork.
 */
function whyKept(
  branches: readonly string[],
  unreadableForks: readonly string[],
  listedAgain: boolean,
  cwd: string,
): string {
  if (branches.length > 0) return `forked to ${branches.join(', ')}`;
  if (unreadableForks.length > 0) {
    const files = unreadableForks.map((reference) => displayPath(reference, cwd)).join(', ');
    return unreadableForks.length === 1
      ? `kept: a fork file that cannot be read names it as parent (${files})`
      : `kept: fork files that cannot be read name it as parent (${files})`;
  }
  if (!listedAgain)
    return 'kept: the prune found a fork of it (the location could not be listed again to name it)';
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
