import { rmdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
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

/** Removes a branch's directory and empty parents (never the location itself); stops at the first non-empty one. */
export async function removeEmptyDirectories(root: string, branch: string): Promise<void> {
  let directory = branchDirectory(root, branch);
  while (directory !== root && directory.startsWith(root)) {
    try {
      await rmdir(directory);
    } catch {
      return;
    }
    directory = dirname(directory);
  }
}
