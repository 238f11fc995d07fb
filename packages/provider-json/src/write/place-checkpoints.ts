import { join } from 'node:path';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { tempFileName } from '../file-names.js';
import type { IdIndexKeeper } from '../id-index/id-index-keeper.js';
import type { ResolvedJsonProviderOptions } from '../options.js';
import { ensureBranchDirectorySync } from '../paths.js';
import { storedFile } from '../read/file-reference.js';
import { type AtomicFile, writeFileAtomic, writeFileAtomicSync, writeFilesAtomic } from './atomic-write.js';
import type { SpareFiles } from './spare-files.js';
import { asWriteError, branchDirectoryVanished, indexEntryOf, type WritePlan } from './write-plan.js';

// Puts checkpoint files in place once a write was checked (its id free, its lease held): each file
// written to a temp name, synced, renamed into its branch directory, and its id index entry recorded.
// A concurrent prune may remove a branch directory it emptied between mkdir and open: the write is
// then tried once more.

/** What placing files needs of the provider. */
export interface PlacementContext {
  options: Readonly<ResolvedJsonProviderOptions>;
  spares: SpareFiles;
  index: IdIndexKeeper;
}

/** Places one checkpoint file synchronously; its index entry is written before it returns. */
export function placeCheckpointSync(
  root: string,
  plan: WritePlan,
  { options, index }: PlacementContext,
): StoredCheckpoint {
  for (let attempt = 0; ; attempt += 1) {
    try {
      const { directory, created } = ensureBranchDirectorySync(
        root,
        plan.metadata.branch,
        options.directoryMode,
      );
      writeFileAtomicSync(directory, plan.fileName, tempFileName(plan.metadata.id), plan.bytes, {
        fsync: options.fsync,
        mode: options.fileMode,
        createdDirectories: created,
      });
      index.recordSync(root, indexEntryOf(plan), true);
      return storedFile(plan.metadata, join(directory, plan.fileName), plan.size);
    } catch (error) {
      if (attempt === 0 && branchDirectoryVanished(error)) continue;
      throw asWriteError(error, root);
    }
  }
}

/** Places one checkpoint file; its index entry is queued, written after the file is in place. */
export async function placeCheckpoint(
  root: string,
  plan: WritePlan,
  { options, spares, index }: PlacementContext,
): Promise<StoredCheckpoint> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      const { directory, created } = ensureBranchDirectorySync(
        root,
        plan.metadata.branch,
        options.directoryMode,
      );
      try {
        await writeFileAtomic(directory, plan.fileName, tempFileName(plan.metadata.id), plan.bytes, {
          fsync: options.fsync,
          mode: options.fileMode,
          createdDirectories: created,
          spares,
        });
      } catch (error) {
        spares.forget(directory);
        throw error;
      }
      index.recordAfterWrite(root, [indexEntryOf(plan)]);
      return storedFile(plan.metadata, join(directory, plan.fileName), plan.size);
    } catch (error) {
      if (attempt === 0 && branchDirectoryVanished(error)) continue;
      throw asWriteError(error, root);
    }
  }
}

/**
 * Places a group of checkpoint files (see `writeFilesAtomic`): written and flushed together, renamed
 * into place in order, their directories synced once; spares replenished for the next groups and the
 * index entries queued. On a retry, files placed before the vanished directory (other branches) are
 * written again with the same bytes, which a reader cannot tell apart.
 */
export async function placeCheckpoints(
  root: string,
  plans: readonly WritePlan[],
  { options, spares, index }: PlacementContext,
): Promise<StoredCheckpoint[]> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      const files: AtomicFile[] = [];
      const directories = new Map<string, { directory: string; created: string[] }>();
      for (const plan of plans) {
        let branch = directories.get(plan.metadata.branch);
        if (branch === undefined) {
          branch = ensureBranchDirectorySync(root, plan.metadata.branch, options.directoryMode);
          directories.set(plan.metadata.branch, branch);
        }
        files.push({
          directory: branch.directory,
          finalName: plan.fileName,
          tempName: tempFileName(plan.metadata.id),
          bytes: plan.bytes,
          createdDirectories: branch.created,
        });
        branch = { directory: branch.directory, created: [] };
        directories.set(plan.metadata.branch, branch);
      }
      const used = new Map<string, number>();
      for (const file of files) used.set(file.directory, (used.get(file.directory) ?? 0) + 1);
      try {
        await writeFilesAtomic(files, { fsync: options.fsync, mode: options.fileMode, spares });
      } catch (error) {
        for (const directory of used.keys()) spares.forget(directory);
        throw error;
      }
      for (const [directory, count] of used) spares.replenish(directory, count);
      index.recordAfterWrite(root, plans.map(indexEntryOf));
      return plans.map((plan, position) =>
        storedFile(plan.metadata, join(files[position]!.directory, plan.fileName), plan.size),
      );
    } catch (error) {
      if (attempt === 0 && branchDirectoryVanished(error)) continue;
      throw asWriteError(error, root);
    }
  }
}
