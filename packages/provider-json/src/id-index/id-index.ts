import { closeSync, constants, lstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { isValidBranchName, isValidCheckpointId } from '@crewline/runtime-state';
import { errorCode, jsonError } from '../errors.js';
import { parseCheckpointFileName } from '../file-names.js';
import { existingBranchDirectory, symlinkError } from '../paths.js';
import { readFlags } from '../read/checkpoint-file.js';
import type { FoundCheckpoint } from '../read/directory-walk.js';

/**
 * The id index: files under `<location>/.ids/` that say where each checkpoint's file is, so reading
 * a checkpoint by id opens one small file and then the checkpoint, however many checkpoints the
 * location holds. No branch name starts with a dot, so the directory is never taken for a branch.
 *
 * Entries are lines `<id> <branch>/<file name>`, appended to the bucket of ids that share their
 * first {@link bucketKeyLength} characters (a generated id's UTC second): `.ids/_20261121T093004`.
 * The last line of an id wins; `<id> -` says it has no entry (its file was deleted). A run on '*'
 * writes hundreds of checkpoints a minute: one file per entry was a new inode each (four thread-pool
 * calls), made in the background while the run's next group of checkpoints was being flushed; in
 * crew-50 on '*', measured side by side, it cost about a tenth more of the run's CPU time (its wall
 * time stayed within the noise of a shared disk). A bucket is created once per second of writing,
 * and a group's entries are one append.
 * Locations written before buckets hold one file per entry, `.ids/<id>` holding `<branch>/<file
 * name>`: read when a bucket has no line for the id, and removed with it.
 *
 * The index is a hint; the checkpoint files stay the truth. An entry is written after the checkpoint's
 * rename and never fsync'd, so it can be missing (a crash, a location written by an older version, a
 * read-only location), stale (a file deleted or moved by hand) or damaged. A reader then scans the
 * location as before and writes the entry again. Whatever an entry holds, it can only name a file
 * of that very id in a branch directory of the location, which the caller checks like any other path.
 */
const indexDirectoryName = '.ids';

/** Characters of an id that name its bucket: a generated id's date and time to the second. */
const bucketKeyLength = 15;

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
/** A bucket larger than this is not read (damaged, or planted): the reader scans instead. */
export const bucketLimitBytes = 4 * 1024 * 1024;
/** What a removed entry's line holds in place of a path. */
export const removedMark = '-';

// Never write through a link planted where an entry should be: it could change a file anywhere.
const noFollow = constants.O_NOFOLLOW ?? 0;
const appendFlags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | noFollow;
/** Appends a removal only to a bucket that exists: without one there is no line to override. */
const appendExistingFlags = constants.O_WRONLY | constants.O_APPEND | noFollow;

function indexDirectory(root: string): string {
  return join(root, indexDirectoryName);
}

/** A bucket's name starts with "_", which no checkpoint id does: it never takes an older entry's name. */
export function bucketPath(root: string, id: string): string {
  return join(indexDirectory(root), `_${id.slice(0, bucketKeyLength)}`);
}

/** The file of `id`'s entry in the layout before buckets. */
function legacyEntryPath(root: string, id: string): string {
  return join(indexDirectory(root), id);
}

/** The entry of `id` in its text, or undefined when the text does not name a checkpoint file of `id`. */
export function parseEntry(id: string, text: string): IdIndexEntry | undefined {
  if (Buffer.byteLength(text) > entryLimitBytes) return undefined;
  const slash = text.lastIndexOf('/');
  const branch = text.slice(0, slash);
  const fileName = text.slice(slash + 1);
  if (slash <= 0 || !isValidBranchName(branch) || parseCheckpointFileName(fileName)?.id !== id)
    return undefined;
  return { id, branch, fileName };
}

/** The text after `<id> ` on the last line of `bucket` that starts with it, if any. */
function lastLineOf(bucket: string, id: string): string | undefined {
  const prefix = `${id} `;
  let end = bucket.length;
  while (end > 0) {
    const start = bucket.lastIndexOf('\n', end - 1) + 1;
    if (bucket.startsWith(prefix, start)) return bucket.slice(start + prefix.length, end);
    end = start - 1;
  }
  return undefined;
}

/** The lines recording `entries`, per bucket path. */
function linesByBucket(root: string, entries: readonly IdIndexEntry[]): Map<string, string> {
  const buckets = new Map<string, string>();
  for (const { id, branch, fileName } of entries) {
    const path = bucketPath(root, id);
    buckets.set(path, `${buckets.get(path) ?? ''}${id} ${branch}/${fileName}\n`);
  }
  return buckets;
}

function notAnIndexDirectory(directory: string) {
  return jsonError(
    'write_failed',
    `"${directory}" is not a directory, so the id index cannot be kept there; remove it (the index is rebuilt as checkpoints are read)`,
  );
}

/**
 * Records where each checkpoint of `entries` is: one append per bucket (usually one). Throws when
 * the index cannot be written (the caller decides whether that is worth a warning: reads work
 * without it). The index directory is checked for a link like every branch directory is.
 */
export async function writeIdIndexEntries(
  root: string,
  entries: readonly IdIndexEntry[],
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
  for (const [path, lines] of linesByBucket(root, entries)) {
    const handle = await open(path, appendFlags, modes.fileMode);
    try {
      await handle.write(lines);
    } finally {
      await handle.close();
    }
  }
}

/** Sync {@link writeIdIndexEntries}. */
export function writeIdIndexEntriesSync(
  root: string,
  entries: readonly IdIndexEntry[],
  modes: IdIndexModes,
): void {
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
  for (const [path, lines] of linesByBucket(root, entries)) {
    const descriptor = openSync(path, appendFlags, modes.fileMode);
    try {
      writeSync(descriptor, lines);
    } finally {
      closeSync(descriptor);
    }
  }
}

/** The text of the file at `path` (opened without following a link), if it has at most `limit` bytes. */
async function readSmallFile(path: string, limit: number): Promise<string | undefined> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, readFlags);
    const { size } = await handle.stat();
    if (size > limit) return undefined;
    // One byte more than the size: a file that grew meanwhile is read to its end all the same.
    const buffer = Buffer.alloc(Math.min(limit, size) + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length === buffer.length) return undefined;
    }
    return buffer.toString('utf8', 0, length);
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/**
 * The entry of checkpoint `id`, or undefined when there is none or it cannot be used (unreadable,
 * a link, damaged, removed, or naming another checkpoint).
 */
async function readEntry(root: string, id: string): Promise<IdIndexEntry | undefined> {
  const bucket = await readSmallFile(bucketPath(root, id), bucketLimitBytes);
  const line = bucket === undefined ? undefined : lastLineOf(bucket, id);
  if (line !== undefined) return parseEntry(id, line);
  const legacy = await readSmallFile(legacyEntryPath(root, id), entryLimitBytes);
  return legacy === undefined ? undefined : parseEntry(id, legacy);
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
 * Removes the entries of checkpoints `ids`: call it for every checkpoint file removed (delete,
 * prune). Appends `<id> -` to the buckets that hold ids of them, and removes their entry files of
 * the layout before buckets. Never throws: an entry left behind is only stale, and a read then
 * finds the file gone and scans.
 */
export async function removeIdIndexEntries(root: string, ids: readonly string[]): Promise<void> {
  const valid = ids.filter((id) => isValidCheckpointId(id));
  const buckets = new Map<string, string>();
  for (const id of valid) {
    const path = bucketPath(root, id);
    buckets.set(path, `${buckets.get(path) ?? ''}${id} ${removedMark}\n`);
  }
  for (const [path, lines] of buckets) {
    let handle: FileHandle | undefined;
    try {
      handle = await open(path, appendExistingFlags);
      await handle.write(lines);
    } catch {
      // No bucket (nothing to override), or none can be written: the entry is only stale.
    } finally {
      await handle?.close().catch(() => undefined);
    }
  }
  for (const id of valid) await unlink(legacyEntryPath(root, id)).catch(() => undefined);
}
