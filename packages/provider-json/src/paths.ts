import { lstatSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { lstat, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { isValidBranchName } from '@crewline/runtime-state';
import { describeError, errorCode, jsonError } from './errors.js';

/** The absolute form of a location. */
export function resolveRoot(location: string): string {
  if (typeof location !== 'string' || location.length === 0 || location.includes('\u0000')) {
    throw jsonError(
      'invalid_argument',
      `location ${JSON.stringify(location)} is not a directory path; pass a directory`,
    );
  }
  return resolve(location);
}

/** The `invalid_config` error of a location that is a file (and not a checkpoint file). */
export function notADirectory(root: string) {
  return jsonError(
    'invalid_config',
    `location "${root}" is a file, not a directory; pass a directory or use SqliteProvider`,
  );
}

/** Whether the location exists (as a directory). Throws the typed error when it is a file. */
export function locationExistsSync(root: string): boolean {
  try {
    if (!statSync(root).isDirectory()) throw notADirectory(root);
    return true;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw wrapStatError(root, error);
  }
}

/** Async {@link locationExistsSync}. */
export async function locationExists(root: string): Promise<boolean> {
  try {
    if (!(await stat(root)).isDirectory()) throw notADirectory(root);
    return true;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw wrapStatError(root, error);
  }
}

function wrapStatError(root: string, error: unknown) {
  if (CrewlineError.isInstance(error) || errorCode(error) === undefined) return error;
  if (errorCode(error) === 'ENOTDIR') return notADirectory(root);
  return jsonError('read_failed', `cannot access location "${root}": ${describeError(error)}`, {
    cause: error,
  });
}

/** The directories from `root` (exclusive) to `directory` (inclusive) that did not exist before. */
export interface CreatedDirectories {
  directory: string;
  /** New directories, outermost first: each one's parent must be synced for it to be durable. */
  created: string[];
}

/** The directory of a branch, checked to stay inside `root`. Throws `invalid_name` otherwise. */
export function branchDirectory(root: string, branch: string): string {
  if (typeof branch !== 'string' || !isValidBranchName(branch)) {
    throw jsonError(
      'invalid_name',
      `branch name ${JSON.stringify(branch)} is not allowed; use segments of letters, digits, "_", "." and "-" separated by "/"`,
    );
  }
  const directory = join(root, ...branch.split('/'));
  assertInside(root, directory, `branch "${branch}"`);
  return directory;
}

/** Throws `invalid_name` unless `path` is strictly inside `root`. */
export function assertInside(root: string, path: string, what: string): void {
  const fromRoot = relative(root, path);
  if (fromRoot === '' || fromRoot === '..' || fromRoot.startsWith(`..${sep}`) || isAbsolute(fromRoot)) {
    throw jsonError(
      'invalid_name',
      `${what} resolves to "${path}", outside the location "${root}"; refusing it`,
    );
  }
}

/**
 * The one error for a symbolic link met inside a location, whatever meets it (a write, a read, a
 * listing or a reference): a link could lead a branch outside the location, and a checkpoint read
 * through one would be resumed into a location that then refuses every write. The location itself
 * may be a link; only what is inside it is checked.
 */
export function symlinkError(root: string, path: string) {
  return jsonError(
    'invalid_name',
    `"${path}" inside the location "${root}" is a symbolic link, and JsonProvider never follows links inside a location; copy the files it leads to into the location, or point the location at the real directory (the location itself may be a link)`,
  );
}

/**
 * Creates the root and branch directories one segment at a time. No segment may be a symbolic link
 * (checked before anything is created under it), so a write can never land outside the location.
 */
export function ensureBranchDirectorySync(root: string, branch: string, mode: number): CreatedDirectories {
  const directory = branchDirectory(root, branch);
  const created: string[] = [];
  const first = mkdirSync(root, { recursive: true, mode });
  if (first !== undefined) created.push(...newAncestors(first, root));
  let current = root;
  for (const segment of branch.split('/')) {
    current = join(current, segment);
    let info: ReturnType<typeof lstatSync> | undefined;
    try {
      info = lstatSync(current);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
    }
    if (info === undefined) {
      try {
        mkdirSync(current, { mode });
        created.push(current);
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw error;
        info = lstatSync(current);
      }
    }
    if (info?.isSymbolicLink()) throw symlinkError(root, current);
    if (info !== undefined && !info.isDirectory()) {
      throw jsonError(
        'write_failed',
        `"${current}" is a file where branch "${branch}" needs a directory; move it away`,
      );
    }
  }
  assertRealInsideSync(root, directory);
  return { directory, created };
}

/** `first` (the outermost directory `mkdir -p` created) and every directory below it down to `root`. */
function newAncestors(first: string, root: string): string[] {
  const result = [first];
  let current = first;
  for (const segment of relative(first, root).split(sep).filter(Boolean)) {
    current = join(current, segment);
    result.push(current);
  }
  return result;
}

/** Belt and braces after the per-segment checks: the real path must be inside the real root. */
function assertRealInsideSync(root: string, directory: string): void {
  assertInside(realpathSync(root), realpathSync(directory), `directory "${directory}"`);
}

/**
 * The directory of an existing branch for reading, or undefined when it does not exist. Throws when
 * a segment is a symbolic link or a file, so reads never follow a link out of the location.
 */
export function existingBranchDirectorySync(root: string, branch: string): string | undefined {
  const directory = branchDirectory(root, branch);
  let current = root;
  for (const segment of branch.split('/')) {
    current = join(current, segment);
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(current);
    } catch (error) {
      if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return undefined;
      throw jsonError('read_failed', `cannot access "${current}": ${describeError(error)}`, { cause: error });
    }
    if (info.isSymbolicLink()) throw symlinkError(root, current);
    if (!info.isDirectory()) return undefined;
  }
  return directory;
}

/** Async {@link existingBranchDirectorySync}. */
export async function existingBranchDirectory(root: string, branch: string): Promise<string | undefined> {
  const directory = branchDirectory(root, branch);
  let current = root;
  for (const segment of branch.split('/')) {
    current = join(current, segment);
    let info: Awaited<ReturnType<typeof lstat>>;
    try {
      info = await lstat(current);
    } catch (error) {
      if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return undefined;
      throw jsonError('read_failed', `cannot access "${current}": ${describeError(error)}`, { cause: error });
    }
    if (info.isSymbolicLink()) throw symlinkError(root, current);
    if (!info.isDirectory()) return undefined;
  }
  return directory;
}

/** The location directory above a branch directory, checked against the branch name. */
export function rootFromBranchDirectory(directory: string, branch: string, file: string): string {
  let current = directory;
  for (const segment of branch.split('/').reverse()) {
    if (basename(current) !== segment) {
      throw jsonError(
        'corrupt_checkpoint',
        `checkpoint file "${file}" says branch "${branch}" but is not in a "${branch}" directory; it was moved by hand`,
      );
    }
    current = dirname(current);
  }
  return current;
}
