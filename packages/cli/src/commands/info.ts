import { type LoadedCheckpoint, lineageCost } from '@crewline/runtime-state';
import { parseCommandArguments } from '../core/args.js';
import { checkpointReport } from '../core/checkpoint-report.js';
import type { CliContext } from '../core/cli-context.js';
import { commandName } from '../core/command-name.js';
import { taskJson, viewDocument } from '../core/document-view.js';
import { findCheckpointForkedFrom } from '../core/fork-point.js';
import { printable } from '../core/format.js';
import { jsonDocument } from '../core/json-output.js';
import { modelPricesOf } from '../core/model-prices.js';
import { openCheckpoint } from '../core/open-location.js';
import { providersOf } from '../core/providers.js';
import { unreadableCause } from '../core/unreadable-checkpoint.js';

/** `crewline checkpoint info [REF]`. */
export async function run(args: readonly string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArguments(
    'checkpoint info',
    args,
    { location: { type: 'string' }, json: { type: 'boolean' }, full: { type: 'boolean' } },
    1,
    commandName(context.env, context.cwd),
  );
  const loaded = await openCheckpoint(
    positionals[0],
    context.cwd,
    await providersOf(context),
    values.location,
    commandName(context.env, context.cwd),
  );
  const view = viewDocument(loaded.document);
  const parent = await parentState(loaded);
  const parentPruned = parent === 'pruned';
  // A fork's history carries the calls of the run it was forked from: shown apart, not as its own.
  const forkPoint = await findCheckpointForkedFrom(
    loaded.provider,
    loaded.location,
    loaded.document.metadata,
  );
  const { own: cost, inherited } = lineageCost(
    loaded.document.events,
    forkPoint?.events,
    await modelPricesOf(context),
  );
  if (values.json) {
    const { metadata } = loaded.document;
    context.stdout.write(
      jsonDocument({
        reference: loaded.checkpoint.reference,
        location: loaded.location,
        provider: loaded.provider.kind,
        sizeBytes: loaded.checkpoint.sizeBytes,
        metadata,
        parentPruned,
        parentUnreadable: parent === 'unreadable',
        format: {
          name: loaded.document.format,
          version: loaded.document.formatVersion,
          libraryVersion: loaded.document.libraryVersion,
        },
        inputs: view.inputs,
        placeholders: view.placeholders,
        missingPlaceholders: view.missingPlaceholders,
        entities: view.entities.map(({ tasks, ...entity }) => ({ ...entity, taskCount: tasks.length })),
        tasks: view.tasks.map(taskJson),
        cost,
        inheritedCost: inherited,
        forkedFrom: forkPoint?.id ?? null,
      }),
    );
    return 0;
  }
  const width = Math.max(60, Math.min(context.stdout.columns ?? 100, 160));
  const lines = checkpointReport(loaded, view, {
    cwd: context.cwd,
    full: values.full,
    width,
    parentPruned,
    parentUnreadable: parent === 'unreadable',
    cost,
    inheritedCost: inherited,
    forkedFrom: forkPoint?.id ?? null,
  });
  context.stdout.write(printable(`${lines.join('\n')}\n`));
  return 0;
}

/**
 * Whether the checkpoint's parent is in its location: `present`, `pruned` (no longer held: pruned or
 * deleted) or `unreadable` (still stored but damaged, so listings leave it out). A file read on its
 * own (not in a location's listing) says nothing about its parent: `present`.
 */
async function parentState(loaded: LoadedCheckpoint): Promise<'present' | 'pruned' | 'unreadable'> {
  const { id, parentId, lineageId } = loaded.document.metadata;
  if (parentId === null) return 'present';
  try {
    // The parent is usually in the same run; only a fork's first checkpoint needs the whole listing.
    const run = await loaded.provider.list(loaded.location, { lineageId });
    if (run.some((checkpoint) => checkpoint.id === parentId)) return 'present';
    if (!run.some((checkpoint) => checkpoint.id === id)) return 'present';
    const all = await loaded.provider.list(loaded.location);
    if (all.some((checkpoint) => checkpoint.id === parentId)) return 'present';
    const cause = await unreadableCause(loaded.provider, loaded.location, parentId);
    return cause === undefined ? 'pruned' : 'unreadable';
  } catch {
    return 'present';
  }
}
