import { rmdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncDirectory } from './atomic-write.js';
import { describeError, errorCode, jsonError } from './errors.js';
import { branchDirectory } from './paths.js';

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
