import { closeSync, constants, lstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { isValidBranchName, isValidCheckpointId } from '@crewline/runtime-state';
import { readFlags } from './checkpoint-file.js';
import type { FoundCheckpoint } from './directory-walk.js';
import { errorCode, jsonError } from './errors.js';
import { parseCheckpointFileName } from './file-names.js';
import { existingBranchDirectory, symlinkError } from './paths.js';

/**
 * The id index: `<location>/.ids/<id>` holds `<branch>/<file name>`, the path of checkpoint `<id>`'s
 * file relative to the location, so reading a checkpoint by id opens one small file and then the
 * checkpoint, however many checkpoints the location holds. No branch name starts with a dot, so the
 * directory is never taken for a branch.
 *
 * The index is a hint; the checkpoint files stay the truth. An entry is written after the checkpoint's
 * rename and never fsync'd, so it can be missing (a crash, a location written by an older version, a
 * read-only location), stale (a file deleted or moved by hand) or damaged. A reader then scans the
 * location as before and writes the entry again. Whatever an entry holds, it can only name a file
 * of that very id in a branch directory of the location, which the caller checks like any other path.
 */
const indexDirectoryName = '.ids';

/** What an entry says: checkpoint `id` is the file `fileName` in the directory of `branch`. */
export interface IdIndexEntry {
  id: string;
  branch: string;
  fileName: string;
}

/** Modes of what the index creates (the provider's `directoryMode` and `fileMode`). */
export interface IdIndexModes {
  directoryMode: number;
  fileMode: number;
}

/** An entry is `<branch>/<file name>`: 200 + 1 + 255 bytes at most; anything longer is damaged. */
const entryLimitBytes = 512;

// Never write through a link planted where an entry should be: it could change a file anywhere.
const writeFlags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0);

function indexDirectory(root: string): string {
  return join(root, indexDirectoryName);
}

function entryPath(root: string, id: string): string {
  return join(indexDirectory(root), id);
}

/** The entry of `id` in its text, or undefined when the text does not name a checkpoint file of `id`. */
function parseEntry(id: string, text: string): IdIndexEntry | undefined {
  const slash = text.lastIndexOf('/');
  const branch = text.slice(0, slash);
  const fileName = text.slice(slash + 1);
  if (slash <= 0 || !isValidBranchName(branch) || parseCheckpointFileName(fileName)?.id !== id)
    return undefined;
  return { id, branch, fileName };
}

function notAnIndexDirectory(directory: string) {
  return jsonError(
    'write_failed',
    `"${directory}" is not a directory, so the id index cannot be kept there; remove it (the index is rebuilt as checkpoints are read)`,
  );
}

/**
 * Records where checkpoint `entry.id` is. Throws when the index cannot be written (the caller
 * decides whether that is worth a warning: reads work without it). Costs a `lstat` and one small
 * unsynced file: the index directory is checked for a link like every branch directory is.
 */
export async function writeIdIndexEntry(
  root: string,
  entry: IdIndexEntry,
  modes: IdIndexModes,
): Promise<void> {
  const directory = indexDirectory(root);
  try {
    const info = await lstat(directory);
    if (!info.isDirectory()) throw notAnIndexDirectory(directory);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
    await mkdir(directory, { mode: modes.directoryMode }).catch((mkdirError: unknown) => {
      if (errorCode(mkdirError) !== 'EEXIST') throw mkdirError;
    });
  }
  const handle = await open(entryPath(root, entry.id), writeFlags, modes.fileMode);
  try {
    await handle.writeFile(`${entry.branch}/${entry.fileName}`);
  } finally {
    await handle.close();
  }
}

/** Sync {@link writeIdIndexEntry}. */
export function writeIdIndexEntrySync(root: string, entry: IdIndexEntry, modes: IdIndexModes): void {
  const directory = indexDirectory(root);
  try {
    if (!lstatSync(directory).isDirectory()) throw notAnIndexDirectory(directory);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
    try {
      mkdirSync(directory, { mode: modes.directoryMode });
    } catch (mkdirError) {
      if (errorCode(mkdirError) !== 'EEXIST') throw mkdirError;
    }
  }
  const descriptor = openSync(entryPath(root, entry.id), writeFlags, modes.fileMode);
  try {
    writeSync(descriptor, `${entry.branch}/${entry.fileName}`);
  } finally {
    closeSync(descriptor);
  }
}

/**
 * The entry of checkpoint `id`, or undefined when there is none or it cannot be used (unreadable,
 * a link, damaged, or naming another checkpoint).
 */
async function readEntry(root: string, id: string): Promise<IdIndexEntry | undefined> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(entryPath(root, id), readFlags);
    const buffer = Buffer.alloc(entryLimitBytes + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > entryLimitBytes) return undefined;
    return parseEntry(id, buffer.toString('utf8', 0, bytesRead));
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/**
 * The file of checkpoint `id` as its entry names it, checked like any path in the location: a branch
 * directory or checkpoint file that is a link throws `symlinkError`. Undefined when there is no
 * usable entry or its file is not there (stale): the caller then scans the location.
 */
export async function findInIdIndex(root: string, id: string): Promise<FoundCheckpoint | undefined> {
  const entry = await readEntry(root, id);
  if (entry === undefined) return undefined;
  const directory = await existingBranchDirectory(root, entry.branch);
  if (directory === undefined) return undefined;
  const path = join(directory, entry.fileName);
  try {
    const info = await lstat(path);
    if (info.isSymbolicLink()) throw symlinkError(root, path);
    if (!info.isFile()) return undefined;
  } catch (error) {
    if (CrewlineError.isInstance(error)) throw error;
    return undefined;
  }
  const named = parseCheckpointFileName(entry.fileName)!;
  return { path, directory, branch: entry.branch, ...named };
}

/**
 * Removes the entry of checkpoint `id`: call it for every checkpoint file removed (delete, prune).
 * Never throws: an entry left behind is only stale, and a read then finds the file gone and scans.
 */
export async function removeIdIndexEntry(root: string, id: string): Promise<void> {
  if (!isValidCheckpointId(id)) return;
  await unlink(entryPath(root, id)).catch(() => undefined);
}
