import { CrewlineError } from '@crewline/events';
import type { CheckpointMetadata, CheckpointWrite } from '@crewline/runtime-state';
import { describeError, errorCode, jsonError } from '../errors.js';
import { assertCheckpointId, checkpointFileName, fileNameProblem } from '../file-names.js';
import type { IdIndexEntry } from '../id-index/id-index.js';
import { branchDirectory } from '../paths.js';
import type { FileContent } from './atomic-write.js';

/** One checkpoint to write: its file's name and bytes, checked before anything is created. */
export interface WritePlan {
  metadata: CheckpointMetadata;
  fileName: string;
  /** The file's bytes, as pieces when the write has them (see `CheckpointWrite.byteChunks`). */
  bytes: FileContent;
  size: number;
}

/**
 * Checks a checkpoint JsonProvider is asked to write (its ids, its branch, the size against
 * `maxCheckpointBytes`) and names its file. Throws `invalid_name` or `too_large` before anything is
 * written.
 */
export function planWrite(root: string, checkpoint: CheckpointWrite, maxCheckpointBytes: number): WritePlan {
  const { metadata } = checkpoint;
  assertCheckpointId(metadata.id);
  if (metadata.parentId !== null) assertCheckpointId(metadata.parentId, 'parent checkpoint id');
  branchDirectory(root, metadata.branch);
  const problem = fileNameProblem(metadata.id, metadata.parentId);
  if (problem)
    throw jsonError('invalid_name', `${problem}; JsonProvider cannot store it, use SqliteProvider`);
  // Pieces when the write has them: the event lines the run encoded once go to the file as they
  // are, not copied into one buffer per checkpoint first.
  const bytes = checkpoint.byteChunks?.() ?? checkpoint.bytes();
  let size = 0;
  for (const piece of bytes instanceof Uint8Array ? [bytes] : bytes) size += piece.length;
  if (size > maxCheckpointBytes) {
    throw jsonError(
      'too_large',
      `checkpoint "${metadata.id}" is ${size} bytes, over maxCheckpointBytes (${maxCheckpointBytes}); raise maxCheckpointBytes to store it`,
    );
  }
  return { metadata, fileName: checkpointFileName(metadata.id, metadata.parentId), bytes, size };
}

/** The id index entry of a planned checkpoint. */
export function indexEntryOf(plan: WritePlan): IdIndexEntry {
  return { id: plan.metadata.id, branch: plan.metadata.branch, fileName: plan.fileName };
}

/**
 * True when a write failed because its branch directory vanished (a concurrent prune may remove a
 * branch directory it emptied between mkdir and open): the write is tried once more.
 */
export function branchDirectoryVanished(error: unknown): boolean {
  const cause = CrewlineError.isInstance(error) ? error.cause : error;
  return errorCode(cause) === 'ENOENT';
}

/** A failed write as a `write_failed` error naming the location (typed errors pass through). */
export function asWriteError(error: unknown, root: string): unknown {
  if (CrewlineError.isInstance(error)) return error;
  return jsonError('write_failed', `could not write a checkpoint in ${root}: ${describeError(error)}`, {
    cause: error,
  });
}
