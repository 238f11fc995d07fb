import { rmdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describeError, errorCode, jsonError } from '../errors.js';
import { assertCheckpointId } from '../file-names.js';
import { removeIdIndexEntries } from '../id-index/id-index.js';
import type { IdIndexKeeper } from '../id-index/id-index-keeper.js';
import type { ResolvedJsonProviderOptions } from '../options.js';
import { branchDirectory, resolveRoot } from '../paths.js';
import type { LocationReader } from '../read/location-reader.js';
import { syncDirectory } from '../write/atomic-write.js';
import type { SpareFiles } from '../write/spare-files.js';

// Removing checkpoint files: the delete of JsonProvider, and the file removal it and the prune
// (location-prune.ts) share. Each waits for the id index entries still being written, removes
// files, then their id index entries.

/** What deleting a checkpoint needs of the provider. */
export interface DeleteContext {
  options: Readonly<ResolvedJsonProviderOptions>;
  index: IdIndexKeeper;
  reader: LocationReader;
  /** Told of the directories a delete removed files from, so that no spare keeps them. */
  spares: SpareFiles;
}

/** Removes one checkpoint file; false when it was already gone. */
export async function removeFile(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw jsonError('write_failed', `could not remove checkpoint "${path}": ${describeError(error)}`, {
      cause: error,
    });
  }
}

/**
 * Removes checkpoint files, then (with `fsync`) syncs each directory they were in once, so that a
 * power loss right after a prune or delete cannot bring them back. Returns the paths that existed.
 */
export async function removeFiles(paths: readonly string[], fsync: boolean): Promise<string[]> {
  const removed: string[] = [];
  for (const path of paths) if (await removeFile(path)) removed.push(path);
  if (fsync)
    for (const directory of new Set(removed.map((path) => dirname(path)))) await syncDirectory(directory);
  return removed;
}

/**
 * Removes a branch's directory and empty parents (never the location itself), stopping at the first
 * non-empty one; then (with `fsync`) syncs that directory, the deepest one left that lost an entry.
 */
export async function removeEmptyDirectories(root: string, branch: string, fsync: boolean): Promise<void> {
  let directory = branchDirectory(root, branch);
  while (directory !== root && directory.startsWith(root)) {
    try {
      await rmdir(directory);
    } catch {
      break;
    }
    directory = dirname(directory);
  }
  if (fsync) await syncDirectory(directory);
}

/** `JsonProvider.delete`: removes one checkpoint's file; false when no file holds its id. */
export async function deleteCheckpoint(
  context: DeleteContext,
  location: string,
  id: string,
): Promise<boolean> {
  const root = resolveRoot(location);
  assertCheckpointId(id);
  await context.index.written(root);
  const found = await context.reader.locate(root, id);
  if (!found) return false;
  // The directory sync comes after the empty directories are gone, on the one that remains.
  const removed = await removeFile(found.path);
  await removeIdIndexEntries(root, [id]);
  // Spare temp files would keep an emptied branch directory; the next group creates new ones.
  context.spares.forget(dirname(found.path));
  await removeEmptyDirectories(root, found.branch, context.options.fsync);
  return removed;
}
