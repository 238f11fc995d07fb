import {
  closeSync,
  fsync,
  fsyncSync,
  open,
  openSync,
  renameSync,
  unlinkSync,
  writev,
  writevSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { describeError, errorCode, jsonError } from '../errors.js';
import { type SpareFiles, tempFileFlags } from './spare-files.js';

// The async writers below go to the thread pool only for what may block: creating the file (a new
// inode waits for the file system's journal, up to a millisecond when other processes sync), writing
// the bytes and the fsyncs. Renaming, closing and opening a directory are answered at once; each
// through the thread pool would cost a round trip (a fraction of a millisecond, more on a loaded
// machine) that a run waiting at its next model call pays in full.

/** Creates a file exclusively with `flags` (see `tempFileFlags`), off the main thread (see above). */
function createExclusive(path: string, flags: number, mode: number): Promise<number> {
  return new Promise((resolve, reject) =>
    open(path, flags, mode, (error, descriptor) => (error ? reject(error) : resolve(descriptor))),
  );
}

/**
 * What a file is written from: one buffer, or consecutive pieces written with one gathering write
 * (a checkpoint's cached event lines, never copied into one buffer).
 */
export type FileContent = Uint8Array | readonly Uint8Array[];

function piecesOf(content: FileContent): readonly Uint8Array[] {
  return content instanceof Uint8Array ? [content] : content;
}

/** The pieces still to write after the first `written` bytes of `pieces` (a short write). */
function remainingPieces(pieces: readonly Uint8Array[], written: number): readonly Uint8Array[] {
  let skipped = written;
  let index = 0;
  while (index < pieces.length && skipped >= pieces[index]!.length) {
    skipped -= pieces[index]!.length;
    index += 1;
  }
  if (index === pieces.length) return [];
  return [pieces[index]!.subarray(skipped), ...pieces.slice(index + 1)];
}

function writeAllSync(descriptor: number, content: FileContent): void {
  let pieces: readonly Uint8Array[] = piecesOf(content).filter((piece) => piece.length > 0);
  while (pieces.length > 0) pieces = remainingPieces(pieces, writevSync(descriptor, [...pieces]));
}

/** Writes all of `content` at the file's current offset, off the main thread. */
function writeAll(descriptor: number, content: FileContent): Promise<void> {
  return new Promise((resolve, reject) => {
    const next = (pieces: readonly Uint8Array[]) => {
      if (pieces.length === 0) {
        resolve();
        return;
      }
      writev(descriptor, [...pieces], (error, written) => {
        if (error) reject(error);
        else next(remainingPieces(pieces, written));
      });
    };
    next(piecesOf(content).filter((piece) => piece.length > 0));
  });
}

/** fsync off the main thread. */
function flush(descriptor: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(descriptor, (error) => (error ? reject(error) : resolve())));
}

function closeQuietly(descriptor: number): void {
  try {
    closeSync(descriptor);
  } catch {
    // Already failing; the original error is the one to report.
  }
}

export interface AtomicWriteOptions {
  /** fsync the file before the rename and the directory after it. */
  fsync: boolean;
  /** Permission bits of the new file. */
  mode: number;
  /** Directories created for this write; their parents are synced too so they survive a crash. */
  createdDirectories?: readonly string[];
  /**
   * Spare temp files created ahead (async writes only): a file is written into one of its
   * directory's spares when one is ready, instead of a temp file created for it.
   */
  spares?: SpareFiles;
}

// Windows cannot fsync a directory handle; the rename is still atomic there, only its durability
// across a power loss is weaker. Everywhere else a failed directory sync fails the write.
const ignorableDirectorySyncCodes = new Set(['EPERM', 'EISDIR', 'EINVAL', 'ENOTSUP', 'EBADF', 'EACCES']);

function directorySyncFailureIsFatal(error: unknown): boolean {
  return !(process.platform === 'win32' && ignorableDirectorySyncCodes.has(errorCode(error) ?? ''));
}

function syncDirectorySync(directory: string): void {
  let descriptor: number | undefined;
  try {
    descriptor = openSync(directory, 'r');
    fsyncSync(descriptor);
  } catch (error) {
    if (directorySyncFailureIsFatal(error)) throw error;
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
}

/** Makes a directory's entries (new, renamed or removed files) durable; best effort on Windows. */
export async function syncDirectory(directory: string): Promise<void> {
  let descriptor: number | undefined;
  try {
    descriptor = openSync(directory, 'r');
    await flush(descriptor);
  } catch (error) {
    if (directorySyncFailureIsFatal(error)) throw error;
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
}

/** Directories whose entries changed: the file's own, and the parent of every directory created. */
function directoriesToSync(directory: string, created: readonly string[] = []): string[] {
  const result = new Set<string>([directory]);
  for (const path of created) result.add(dirname(path));
  return [...result].reverse();
}

function writeFailed(finalPath: string, error: unknown) {
  return jsonError(
    'write_failed',
    `could not write checkpoint "${finalPath}": ${describeError(error)}; check free space and permissions, then write again`,
    { cause: error },
  );
}

/**
 * Writes `bytes` to `directory/finalName` so that a reader sees either no file or the whole file:
 * exclusive temp file in the same directory, write, fsync, close, rename, fsync the directory. On
 * any failure before the rename the temp file is removed and a `write_failed` error is thrown:
 * success is never reported after an fsync error. When only the directory sync fails, it throws
 * too and the renamed file stays in place, as with {@link writeFilesAtomic}.
 */
export function writeFileAtomicSync(
  directory: string,
  finalName: string,
  tempName: string,
  bytes: FileContent,
  options: AtomicWriteOptions,
): void {
  const tempPath = join(directory, tempName);
  const finalPath = join(directory, finalName);
  let descriptor: number | undefined;
  let created = false;
  try {
    descriptor = openSync(tempPath, 'wx', options.mode);
    created = true;
    writeAllSync(descriptor, bytes);
    if (options.fsync) fsyncSync(descriptor);
    const closing = descriptor;
    descriptor = undefined;
    closeSync(closing);
    renameSync(tempPath, finalPath);
  } catch (error) {
    if (descriptor !== undefined) closeQuietly(descriptor);
    // Only ever remove what this write created: an existing temp name belongs to someone else.
    if (created) removeQuietlySync(tempPath);
    throw writeFailed(finalPath, error);
  }
  if (!options.fsync) return;
  try {
    for (const path of directoriesToSync(directory, options.createdDirectories)) syncDirectorySync(path);
  } catch (error) {
    // Success is never reported after an fsync error, but the renamed file stays, as in
    // writeFilesAtomic: its content is whole (written and flushed before the rename), and removing
    // it could take away a file of the same name an async write of this checkpoint placed.
    throw writeFailed(finalPath, error);
  }
}

/**
 * Async {@link writeFileAtomicSync}: a group of one file for {@link writeFilesAtomic}, so that the
 * temp file, rename and directory sync steps (and their clean-up on failure) are written once.
 */
export function writeFileAtomic(
  directory: string,
  finalName: string,
  tempName: string,
  bytes: FileContent,
  options: AtomicWriteOptions,
): Promise<void> {
  return writeFilesAtomic(
    [
      {
        directory,
        finalName,
        tempName,
        bytes,
        ...(options.createdDirectories ? { createdDirectories: options.createdDirectories } : {}),
      },
    ],
    options,
  );
}

function removeQuietlySync(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Nothing to remove, or removal failed: the write is reported as failed either way.
  }
}

/** One file of {@link writeFilesAtomic}. */
export interface AtomicFile {
  directory: string;
  finalName: string;
  tempName: string;
  bytes: FileContent;
  /** Directories created for this file; their parents are synced too. */
  createdDirectories?: readonly string[];
}

/**
 * Writes, flushes and closes one temp file of a group — a spare when one is ready, else a new temp
 * file — and returns its path; on failure removes it and rejects.
 */
async function writeTempFile(file: AtomicFile, options: AtomicWriteOptions): Promise<string> {
  const spare = options.spares?.take(file.directory);
  let tempPath: string;
  let descriptor: number;
  let synced: boolean;
  if (spare) {
    ({ path: tempPath, descriptor, synced } = spare);
  } else {
    tempPath = join(file.directory, file.tempName);
    const created = tempFileFlags(options.fsync);
    // Only ever remove what this write created: a temp name that exists belongs to someone else.
    descriptor = await createExclusive(tempPath, created.flags, options.mode);
    synced = created.synced;
  }
  let open = true;
  try {
    await writeAll(descriptor, file.bytes);
    // Opened with O_SYNC, the write returned once the bytes were durable: no fsync needed.
    if (options.fsync && !synced) await flush(descriptor);
    open = false;
    closeSync(descriptor);
    return tempPath;
  } catch (error) {
    if (open) closeQuietly(descriptor);
    removeQuietlySync(tempPath);
    throw error;
  }
}

/**
 * Writes several files the way {@link writeFileAtomic} writes one, as one group: every temp file (a
 * spare created ahead when `options.spares` has one) is written and fsync'd at once (the flushes
 * overlap), then the files are renamed into place **in the given order**, then each directory
 * involved is fsync'd once. A crash leaves a prefix of the files
 * visible, each whole — never a later one without an earlier one. Rejects with `write_failed` when
 * any file cannot be written: the files before it are in place, none after it is renamed, and every
 * temp file left is removed. When only a directory sync fails, it rejects too and the renamed files
 * (whole) stay in place.
 */
export async function writeFilesAtomic(
  files: readonly AtomicFile[],
  options: Omit<AtomicWriteOptions, 'createdDirectories'>,
): Promise<void> {
  // An exclusive open that fails (a temp name taken) fails that file alone, like a failed write.
  const written = await Promise.allSettled(files.map((file) => writeTempFile(file, options)));
  let placed = 0;
  try {
    for (; placed < files.length; placed += 1) {
      const file = files[placed]!;
      const outcome = written[placed]!;
      if (outcome.status === 'rejected') throw outcome.reason;
      renameSync(outcome.value, join(file.directory, file.finalName));
    }
  } catch (error) {
    const failed = files[placed]!;
    for (let index = placed; index < files.length; index += 1) {
      const outcome = written[index]!;
      if (outcome.status === 'fulfilled') removeQuietlySync(outcome.value);
    }
    throw writeFailed(join(failed.directory, failed.finalName), error);
  }
  if (!options.fsync) return;
  const directories = new Set<string>();
  for (const file of files)
    for (const path of directoriesToSync(file.directory, file.createdDirectories)) directories.add(path);
  try {
    for (const directory of directories) await syncDirectory(directory);
  } catch (error) {
    // Success is never reported after an fsync error, but the renamed files stay: their content is
    // whole (written and flushed before the rename), and a synchronous write of the same
    // checkpoints (a strict checkpoint writing the queued ones again) may have placed these names.
    throw writeFailed(join(files[0]!.directory, files[0]!.finalName), error);
  }
}
