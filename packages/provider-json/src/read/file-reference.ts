import { readdirSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { CheckpointMetadata, StoredCheckpoint } from '@crewline/runtime-state';
import { describeError, errorCode, jsonError } from '../errors.js';
import { parseCheckpointFileName } from '../file-names.js';
import { existingBranchDirectorySync, notADirectory, rootFromBranchDirectory } from '../paths.js';
import { readHead, readHeadSync, readMetadata, readMetadataSync } from './checkpoint-file.js';

/**
 * A checkpoint file given as a reference. The name decides what it means:
 *
 * - `<id>_p-<parent|none>.json` in the directory of its branch (`<location>/<branch>/`): that
 *   checkpoint of that location (`home`), where a resumed run goes on writing;
 * - any other file — a renamed copy (`saved.json`), or a checkpoint file copied out of its
 *   location: a standalone checkpoint, and its own read-only location of one checkpoint.
 *
 * Either way exactly that file is read and its metadata validated, and a checkpoint-shaped name must
 * name the checkpoint the file holds: a name and contents that disagree (a file renamed over
 * another, or overwritten) are `corrupt_checkpoint`, never silently another checkpoint.
 */
export interface FileReference {
  path: string;
  checkpoint: StoredCheckpoint;
  /** The location the file belongs to; undefined for a standalone file. */
  home: string | undefined;
}

/** The listing entry of one checkpoint file. */
export function storedFile(metadata: CheckpointMetadata, path: string, sizeBytes: number): StoredCheckpoint {
  return { ...structuredClone(metadata), reference: path, sizeBytes };
}

/** `corrupt_checkpoint` for a file whose name says one checkpoint and whose contents hold another. */
export function nameMismatch(path: string, named: string, held: string) {
  return jsonError(
    'corrupt_checkpoint',
    `checkpoint file "${path}" is named for checkpoint "${named}" but holds checkpoint "${held}" (renamed over another, overwritten or damaged); restore it, or give a copy a name that is not a checkpoint file name to read it on its own`,
  );
}

/**
 * `corrupt_checkpoint` for a `.json` file with no bytes at all: a checkpoint cut before its first
 * byte (a copy interrupted, a full disk) is damaged, as one cut after 100 bytes is, not "no checkpoint".
 */
function emptyCheckpointFile(path: string) {
  return jsonError(
    'corrupt_checkpoint',
    `checkpoint file "${path}" is empty (0 bytes; a copy interrupted or a full disk cuts a file this way); restore it from a backup, or remove it`,
  );
}

/** The location above a branch directory when `directory` is `<location>/<branch>`, else undefined. */
function homeOf(directory: string, branch: string): string | undefined {
  let current = directory;
  for (const segment of branch.split('/').reverse()) {
    if (basename(current) !== segment) return undefined;
    current = dirname(current);
  }
  return current;
}

/**
 * What a file reference means (see {@link FileReference}); undefined when the file is not a JSON
 * object at all (not a checkpoint, not this provider's). Throws typed errors for a damaged,
 * oversized or mismatched checkpoint file.
 */
export function parseFileReference(path: string, maxBytes: number): FileReference | undefined {
  const named = parseCheckpointFileName(basename(path));
  if (!named) {
    const head = readHeadSync(path);
    if (head.size === 0 && path.endsWith('.json')) throw emptyCheckpointFile(path);
    if (!head.opensObject) return undefined;
  }
  const { metadata, size } = readMetadataSync(path, maxBytes);
  if (named && named.id !== metadata.id) throw nameMismatch(path, named.id, metadata.id);
  const home = named ? homeOf(dirname(path), metadata.branch) : undefined;
  // A file reached through a linked branch directory is refused here, as a write to that branch
  // would be: resumed into the location, the run could not write a single checkpoint.
  if (home !== undefined) existingBranchDirectorySync(home, metadata.branch);
  return { path, checkpoint: storedFile(metadata, path, size), home };
}

/**
 * The one checkpoint of a location that is a file (a standalone checkpoint file), or undefined when
 * the location is a directory or missing. A file that is no checkpoint at all is the usual
 * "location is a file" `invalid_config` error.
 */
export async function standaloneCheckpoint(
  root: string,
  maxBytes: number,
): Promise<StoredCheckpoint | undefined> {
  try {
    if (!(await stat(root)).isFile()) return undefined;
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return undefined;
    throw jsonError('read_failed', `cannot access location "${root}": ${describeError(error)}`, {
      cause: error,
    });
  }
  // Not JSON at all: a JSON location pointed at another kind of file (a database, say).
  const head = await readHead(root);
  if (head.size === 0 && root.endsWith('.json')) throw emptyCheckpointFile(root);
  if (!head.opensObject) throw notADirectory(root);
  const { metadata, size } = await readMetadata(root, maxBytes, { checkEnd: true });
  const named = parseCheckpointFileName(basename(root));
  if (named && named.id !== metadata.id) throw nameMismatch(root, named.id, metadata.id);
  return storedFile(metadata, root, size);
}

/**
 * When `directory` holds checkpoint files directly it is a branch directory: the location is found
 * by stripping the branch (read from its newest file) and the reference means that branch's latest.
 * Files that cannot be used are handed to `reportUnreadable` and the next newest is tried. A branch
 * directory reached through a link is refused (see `symlinkError`).
 */
export function branchDirectoryReference(
  directory: string,
  maxBytes: number,
  reportUnreadable: (path: string, error: unknown) => void,
): { location: string; id: string } | undefined {
  let names: string[];
  try {
    names = readdirSync(directory);
  } catch {
    return undefined;
  }
  const newest = names
    .map((name) => ({ name, parsed: parseCheckpointFileName(name) }))
    .filter((entry) => entry.parsed !== undefined)
    .sort((a, b) => (a.parsed!.id < b.parsed!.id ? 1 : a.parsed!.id > b.parsed!.id ? -1 : 0));
  for (const entry of newest) {
    const path = join(directory, entry.name);
    let found: { location: string; branch: string; id: string };
    try {
      const { metadata } = readMetadataSync(path, maxBytes);
      if (metadata.id !== entry.parsed!.id) throw nameMismatch(path, entry.parsed!.id, metadata.id);
      const location = rootFromBranchDirectory(directory, metadata.branch, path);
      found = { location, branch: metadata.branch, id: metadata.id };
    } catch (error) {
      reportUnreadable(path, error);
      continue;
    }
    existingBranchDirectorySync(found.location, found.branch);
    return { location: found.location, id: found.id };
  }
  return undefined;
}
