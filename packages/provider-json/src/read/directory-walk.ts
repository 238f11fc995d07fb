import { type Dirent, readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isValidBranchName } from '@crewline/runtime-state';
import { describeError, errorCode, jsonError } from '../errors.js';
import { parseCheckpointFileName, parseTempFileName } from '../file-names.js';
import { symlinkError } from '../paths.js';

/** A checkpoint file found on disk, described by its path and name alone (nothing read yet). */
export interface FoundCheckpoint {
  path: string;
  directory: string;
  branch: string;
  id: string;
  parentId: string | null;
}

export interface WalkResult {
  checkpoints: FoundCheckpoint[];
  /** Temp files of writers (finished, killed or in flight). */
  tempFiles: { path: string; pid: number }[];
  /**
   * Symbolic links met where the walk would have found a checkpoint file or a branch directory to
   * visit, sorted; never followed. Other links (hidden names, names that are no checkpoint) are ignored
   * like other files.
   */
  links: string[];
}

function emptyResult(): WalkResult {
  return { checkpoints: [], tempFiles: [], links: [] };
}

/** Oldest first, as a walk sorts them: by id (a generated id starts with its time), then branch. */
export function compareFound(a: FoundCheckpoint, b: FoundCheckpoint): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : a.branch < b.branch ? -1 : a.branch > b.branch ? 1 : 0;
}

/** Sorts one directory's entries into the result; returns the branch subdirectories to visit. */
function classify(
  directory: string,
  segments: readonly string[],
  entries: Dirent[],
  result: WalkResult,
  recurse: boolean,
): string[] {
  const subdirectories: string[] = [];
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isSymbolicLink()) {
      const couldBeBranch = recurse && isValidBranchName(entry.name);
      const couldBeCheckpoint = segments.length > 0 && parseCheckpointFileName(entry.name) !== undefined;
      if (couldBeBranch || couldBeCheckpoint) result.links.push(path);
    } else if (entry.isDirectory()) {
      if (isValidBranchName(entry.name)) subdirectories.push(entry.name);
    } else if (entry.isFile()) {
      const temp = parseTempFileName(entry.name);
      if (temp) {
        result.tempFiles.push({ path, pid: temp.pid });
        continue;
      }
      // Files directly in the location belong to no branch (branch names are never empty).
      if (segments.length === 0) continue;
      const parsed = parseCheckpointFileName(entry.name);
      if (parsed) result.checkpoints.push({ path, directory, branch: segments.join('/'), ...parsed });
    }
  }
  return subdirectories;
}

/**
 * One directory's entries sorted as a walk sorts them (into a result of their own), and the branch
 * subdirectories to visit; for a reader that lists directories one at a time (lineage-prune.ts).
 */
export function classifyEntries(
  directory: string,
  segments: readonly string[],
  entries: Dirent[],
): { result: WalkResult; subdirectories: string[] } {
  const result = emptyResult();
  const subdirectories = classify(directory, segments, entries, result, true);
  return { result, subdirectories };
}

/**
 * The checkpoints a walk found, unless it met a link where a checkpoint or a branch could be: then
 * the `symlinkError` naming it, as a write to that branch would throw.
 */
export function refuseLinks(root: string, walked: WalkResult): FoundCheckpoint[] {
  const link = walked.links[0];
  if (link !== undefined) throw symlinkError(root, link);
  return walked.checkpoints;
}

/** The `read_failed` error for a directory of the location that cannot be listed. */
export function listFailed(directory: string, error: unknown) {
  return jsonError(
    'read_failed',
    `cannot list checkpoint directory "${directory}": ${describeError(error)}`,
    { cause: error, details: { directory } },
  );
}

/**
 * Finds the checkpoint files under `root` (every branch, or only `branch` and not its sub-branches),
 * oldest first by id. A missing directory has none. Links are reported, never followed.
 */
export async function walkLocation(
  root: string,
  start?: { directory: string; branch: string },
): Promise<WalkResult> {
  const result = emptyResult();
  const visit = async (directory: string, segments: string[], recurse: boolean): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(directory, { withFileTypes: true });
    } catch (error) {
      if (errorCode(error) === 'ENOENT' || (errorCode(error) === 'ENOTDIR' && segments.length > 0)) return;
      throw listFailed(directory, error);
    }
    const subdirectories = classify(directory, segments, entries, result, recurse);
    if (recurse) {
      for (const name of subdirectories) await visit(join(directory, name), [...segments, name], true);
    }
  };
  if (start) await visit(start.directory, start.branch.split('/'), false);
  else await visit(root, [], true);
  result.checkpoints.sort(compareFound);
  result.links.sort();
  return result;
}

/** Sync {@link walkLocation}. */
export function walkLocationSync(root: string, start?: { directory: string; branch: string }): WalkResult {
  const result = emptyResult();
  const visit = (directory: string, segments: string[], recurse: boolean): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(directory, { withFileTypes: true });
    } catch (error) {
      if (errorCode(error) === 'ENOENT' || (errorCode(error) === 'ENOTDIR' && segments.length > 0)) return;
      throw listFailed(directory, error);
    }
    const subdirectories = classify(directory, segments, entries, result, recurse);
    if (recurse) for (const name of subdirectories) visit(join(directory, name), [...segments, name], true);
  };
  if (start) visit(start.directory, start.branch.split('/'), false);
  else visit(root, [], true);
  result.checkpoints.sort(compareFound);
  result.links.sort();
  return result;
}
