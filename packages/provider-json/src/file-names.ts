import { isValidCheckpointId } from '@crewline/runtime-state';
import { jsonError } from './errors.js';
import { writerNameDigits } from './write/temp-writer.js';

/** Separates a checkpoint's id from its parent's in a file name: `<id>_p-<parent>.json`. */
const parentMarker = '_p-';
const noParent = 'none';
const checkpointSuffix = '.json';
/** Longest file name most file systems accept (ext4, APFS, NTFS: 255). */
export const MAX_FILE_NAME_BYTES = 255;

/** `<id>_p-<parentId|none>.json`: the parent is recoverable from the name alone. */
export function checkpointFileName(id: string, parentId: string | null): string {
  return `${id}${parentMarker}${parentId ?? noParent}${checkpointSuffix}`;
}

/** Why an id cannot be stored by this provider (beyond the core's id rules), or undefined. */
export function fileNameProblem(id: string, parentId: string | null): string | undefined {
  if (id.includes(parentMarker))
    return `checkpoint id "${id}" contains "${parentMarker}", which separates id and parent in file names`;
  const name = checkpointFileName(id, parentId);
  if (Buffer.byteLength(name) > MAX_FILE_NAME_BYTES) {
    return `file name for checkpoint "${id}" (parent "${parentId}") is longer than ${MAX_FILE_NAME_BYTES} bytes`;
  }
  return undefined;
}

/** The id and parent a checkpoint file name carries, or undefined when it is not a checkpoint file. */
export function parseCheckpointFileName(name: string): { id: string; parentId: string | null } | undefined {
  if (!name.endsWith(checkpointSuffix)) return undefined;
  const marker = name.indexOf(parentMarker);
  if (marker <= 0) return undefined;
  const id = name.slice(0, marker);
  const parent = name.slice(marker + parentMarker.length, -checkpointSuffix.length);
  if (!isValidCheckpointId(id)) return undefined;
  if (parent === noParent) return { id, parentId: null };
  return isValidCheckpointId(parent) ? { id, parentId: parent } : undefined;
}

/**
 * A temp file name for a checkpoint being written: `.<id>.<pid>.<8 hex>.tmp`. The leading dot keeps
 * it out of listings (no checkpoint name or branch starts with a dot); the pid lets a later sweep
 * tell a dead writer's leftover from a live writer's file. The hex digits start with where the writer
 * runs, as a spare's do (see temp-writer.ts), so the leftovers of a writer provably gone are removed
 * at once; the shape is the one older versions recognize temp files by (to them the digits are
 * random, and they sweep these files by the pid and age alone, as before).
 */
export function tempFileName(id: string): string {
  return `.${id}.${process.pid}.${writerNameDigits()}.tmp`;
}

/**
 * A spare temp file's name, `.spare.<pid>.<8 hex>.tmp` (see spare-files.ts): created before the
 * checkpoint it will hold is known, it is a temp file like the others — hidden, and swept once its
 * writer is gone. The hex digits start with where the writer runs (see temp-writer.ts).
 */
export function spareFileName(): string {
  return `.spare.${process.pid}.${writerNameDigits()}.tmp`;
}

const sparePattern = /^\.spare\.(\d{1,10})\.([0-9a-f]{8})\.tmp$/;

/** The writer pid and hex digits of a spare temp file's name, or undefined when it is not one. */
export function parseSpareFileName(name: string): { pid: number; digits: string } | undefined {
  const match = sparePattern.exec(name);
  if (!match) return undefined;
  return { pid: Number(match[1]), digits: match[2]! };
}

const tempPattern = /^\.(.+)\.(\d{1,10})\.([0-9a-f]{8})\.tmp$/;

/**
 * The writer pid and hex digits of a temp file name (a spare's too), or undefined when the name is
 * not one of ours. The digits of a name made by an older version are random.
 */
export function parseTempFileName(name: string): { pid: number; digits: string } | undefined {
  const match = tempPattern.exec(name);
  if (!match) return undefined;
  return { pid: Number(match[2]), digits: match[3]! };
}

/** Throws `invalid_name` unless `id` is a valid checkpoint id. */
export function assertCheckpointId(id: string, what = 'checkpoint id'): void {
  if (typeof id !== 'string' || !isValidCheckpointId(id)) {
    throw jsonError(
      'invalid_name',
      `${what} ${JSON.stringify(id)} is not allowed; ids are letters, digits, "_", "." and "-" (no "..", no "/")`,
    );
  }
}
