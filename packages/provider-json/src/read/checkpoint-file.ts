import { closeSync, constants, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import {
  CHECKPOINT_FORMAT,
  CHECKPOINT_FORMAT_VERSION,
  type CheckpointMetadata,
  parseDocumentText,
  validateDocument,
  validateMetadata,
} from '@crewline/runtime-state';
import { describeError, errorCode, jsonError } from '../errors.js';
import type { FoundCheckpoint } from './directory-walk.js';

/** What a listing reads first: the envelope and metadata lines fit in this for any normal checkpoint. */
const headChunkBytes = 16 * 1024;
/** Past this, the metadata line is not searched for any more and the whole file is parsed instead. */
const headLimitBytes = 1024 * 1024;
const newline = 0x0a;
/** How much of a file's end is read to see that it closes the document (a little trailing space allowed). */
const tailBytes = 32;
/**
 * How the text runtime-state lays out ends: the events list closed at the start of a line (or empty)
 * and the document closed on the next. Entities are indented, so no earlier line break of the text is
 * followed by `]` and then `}` at the start of lines: a file cut at any line ends otherwise.
 */
const documentEnd = /(?:\n\]|\[\])\r?\n\}\s*$/;

// Never follow a link planted where a checkpoint file should be (O_NOFOLLOW does not exist on Windows).
export const readFlags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

/** The first bytes of a checkpoint file, up to the end of its metadata line when found. */
export interface Head {
  text: string | undefined;
  size: number;
  /** The first byte that is not white space is `{`: the file may be a JSON object at all. */
  opensObject: boolean;
  /**
   * The last bytes close the document as runtime-state lays it out. A file cut short (a copy
   * interrupted, a disk filled) keeps a healthy head; without this, a listing that reads only the
   * head would show it as a good checkpoint. Read by `readHead` only (listings are asynchronous).
   */
  closesDocument?: boolean;
}

/** Whether the last bytes of a file end the document (see `documentEnd`). */
function closesDocument(tail: Buffer): boolean {
  return documentEnd.test(tail.toString('latin1'));
}

/** The last bytes from what the head read, when that was the whole file; else undefined (read them). */
function tailOf(buffer: Buffer, length: number, size: number): Buffer | undefined {
  return length >= size ? buffer.subarray(Math.max(0, length - tailBytes), length) : undefined;
}

const whiteSpace = new Set([0x20, 0x09, 0x0a, 0x0d]);

function opensObject(buffer: Uint8Array, length: number): boolean {
  for (let index = 0; index < length; index += 1) {
    if (!whiteSpace.has(buffer[index]!)) return buffer[index] === 0x7b;
  }
  return false;
}

/** Index just past the second newline (the end of the metadata line), or -1. */
function endOfMetadataLine(buffer: Uint8Array, length: number): number {
  const first = buffer.indexOf(newline);
  if (first < 0 || first >= length) return -1;
  const second = buffer.indexOf(newline, first + 1);
  return second < 0 || second >= length ? -1 : second + 1;
}

function readFailed(path: string, error: unknown) {
  if (errorCode(error) === 'ENOENT')
    return jsonError('not_found', `checkpoint file "${path}" no longer exists`, { cause: error });
  if (errorCode(error) === 'ELOOP') {
    return jsonError(
      'invalid_name',
      `checkpoint file "${path}" is a symbolic link, and JsonProvider never follows links; copy the file it leads to in its place, or give the real file's path`,
      {
        cause: error,
      },
    );
  }
  return jsonError('read_failed', `cannot read checkpoint file "${path}": ${describeError(error)}`, {
    cause: error,
  });
}

/** Reads the head of a checkpoint file synchronously. */
export function readHeadSync(path: string): Head {
  let descriptor: number | undefined;
  try {
    descriptor = openSync(path, readFlags);
    const size = fstatSync(descriptor).size;
    let buffer = Buffer.alloc(Math.min(headChunkBytes, size));
    let length = readSync(descriptor, buffer, 0, buffer.length, 0);
    let end = endOfMetadataLine(buffer, length);
    if (end < 0 && length < size && size > headChunkBytes) {
      buffer = Buffer.alloc(Math.min(headLimitBytes, size));
      length = readSync(descriptor, buffer, 0, buffer.length, 0);
      end = endOfMetadataLine(buffer, length);
    }
    return {
      text: end < 0 ? undefined : buffer.toString('utf8', 0, end),
      size,
      opensObject: opensObject(buffer, length),
    };
  } catch (error) {
    throw readFailed(path, error);
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
}

/** Reads the head of a checkpoint file, and its last bytes (see `closesDocument`). */
export async function readHead(path: string): Promise<Head> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, readFlags);
    const size = (await handle.stat()).size;
    let buffer = Buffer.alloc(Math.min(headChunkBytes, size));
    let { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    let end = endOfMetadataLine(buffer, bytesRead);
    if (end < 0 && bytesRead < size && size > headChunkBytes) {
      buffer = Buffer.alloc(Math.min(headLimitBytes, size));
      ({ bytesRead } = await handle.read(buffer, 0, buffer.length, 0));
      end = endOfMetadataLine(buffer, bytesRead);
    }
    let tail = tailOf(buffer, bytesRead, size);
    if (tail === undefined) {
      const read = await handle.read(Buffer.alloc(tailBytes), 0, tailBytes, Math.max(0, size - tailBytes));
      tail = read.buffer.subarray(0, read.bytesRead);
    }
    return {
      text: end < 0 ? undefined : buffer.toString('utf8', 0, end),
      size,
      opensObject: opensObject(buffer, bytesRead),
      closesDocument: closesDocument(tail),
    };
  } catch (error) {
    throw readFailed(path, error);
  } finally {
    await handle?.close();
  }
}

/**
 * The metadata from the first two lines of a checkpoint as runtime-state lays it out
 * (`{"format": ..., "formatVersion": ..., "libraryVersion": ...,` then `"metadata": {...},`).
 * Undefined when the head does not have that shape or another format version (the caller then
 * parses the whole file, which also upgrades older versions). Throws typed errors for `__proto__`
 * keys and invalid metadata.
 */
export function metadataFromHead(head: string, origin: string): CheckpointMetadata | undefined {
  const firstBreak = head.indexOf('\n');
  const envelope = head.slice(0, firstBreak);
  const metadataLine = head.slice(firstBreak + 1).trimEnd();
  if (
    !envelope.startsWith('{"format"') ||
    !metadataLine.startsWith('"metadata"') ||
    !metadataLine.endsWith(',')
  ) {
    return undefined;
  }
  let parsed: unknown;
  let protoKey = false;
  try {
    // JSON.parse makes a "__proto__" key an own property (no prototype change); it is still refused.
    parsed = JSON.parse(`${envelope}\n${metadataLine.slice(0, -1)}}`, (key, value) => {
      if (key === '__proto__') protoKey = true;
      return value;
    });
  } catch {
    return undefined;
  }
  if (protoKey) {
    throw jsonError(
      'corrupt_checkpoint',
      `checkpoint (${origin}) contains a "__proto__" key; refusing to load it`,
    );
  }
  const record = parsed as Record<string, unknown>;
  if (record.format !== CHECKPOINT_FORMAT || record.formatVersion !== CHECKPOINT_FORMAT_VERSION)
    return undefined;
  return validateMetadata(record.metadata);
}

/** The metadata of a whole checkpoint text (parsed, upgraded and validated by the core). */
export function metadataFromText(text: string, origin: string, maxBytes: number): CheckpointMetadata {
  return validateDocument(parseDocumentText(text, { origin, maxBytes }), undefined, origin).metadata;
}

/** The `too_large` error of a file over `maxBytes`, with the limit and how to raise it. */
export function tooLargeFile(path: string, size: number, maxBytes: number) {
  return jsonError(
    'too_large',
    `checkpoint file "${path}" is ${size} bytes, over the ${maxBytes}-byte limit (maxCheckpointBytes); if you trust it, read it with new JsonProvider({ maxCheckpointBytes: ${size} }) or more`,
  );
}

/** A checkpoint file's metadata and size, read synchronously (see {@link readMetadata}). */
export function readMetadataSync(
  path: string,
  maxBytes: number,
): { metadata: CheckpointMetadata; size: number } {
  const head = readHeadSync(path);
  const fromHead = head.text === undefined ? undefined : metadataFromHead(head.text, path);
  if (fromHead) return { metadata: fromHead, size: head.size };
  if (head.size > maxBytes) throw tooLargeFile(path, head.size, maxBytes);
  let text: string;
  try {
    const descriptor = openSync(path, readFlags);
    try {
      text = readFileSync(descriptor, 'utf8');
    } finally {
      closeSync(descriptor);
    }
  } catch (error) {
    throw readFailed(path, error);
  }
  return { metadata: metadataFromText(text, path, maxBytes), size: head.size };
}

/**
 * A checkpoint file's metadata (validated) and size: from its first lines, or by parsing the whole
 * file when they do not have the expected shape (a file pretty-printed by hand). With `checkEnd`
 * (listings), also when its end does not close the document: a file cut short keeps its first lines,
 * and the parse then names the damage. Without it, a reference to such a file still resolves and
 * the name check comes first (a torn file that holds another checkpoint is named as that); reading
 * it parses it whole anyway.
 */
export async function readMetadata(
  path: string,
  maxBytes: number,
  options: { checkEnd?: boolean } = {},
): Promise<{ metadata: CheckpointMetadata; size: number }> {
  const head = await readHead(path);
  const fromHead =
    head.text === undefined || (options.checkEnd === true && !head.closesDocument)
      ? undefined
      : metadataFromHead(head.text, path);
  if (fromHead) return { metadata: fromHead, size: head.size };
  if (head.size > maxBytes) throw tooLargeFile(path, head.size, maxBytes);
  let handle: FileHandle | undefined;
  let text: string;
  try {
    handle = await open(path, readFlags);
    text = await handle.readFile('utf8');
  } catch (error) {
    throw readFailed(path, error);
  } finally {
    await handle?.close();
  }
  return { metadata: metadataFromText(text, path, maxBytes), size: head.size };
}

/**
 * The id a checkpoint text holds: from its metadata line, or (for a file laid out by hand) by
 * parsing it whole. Throws the core's typed errors for damaged text.
 */
export function idInText(text: string, origin: string, maxBytes: number): string {
  const first = text.indexOf('\n');
  const second = first < 0 ? -1 : text.indexOf('\n', first + 1);
  const fromHead = second < 0 ? undefined : metadataFromHead(text.slice(0, second + 1), origin);
  return (fromHead ?? metadataFromText(text, origin, maxBytes)).id;
}

/** Throws `corrupt_checkpoint` when a file holds another id or branch than its name and directory say. */
export function assertMatchesName(metadata: CheckpointMetadata, found: FoundCheckpoint): void {
  if (metadata.id !== found.id || metadata.branch !== found.branch) {
    throw jsonError(
      'corrupt_checkpoint',
      `file name and directory say checkpoint "${found.id}" on branch "${found.branch}" but the file holds "${metadata.id}" on "${metadata.branch}"; it was moved or renamed by hand`,
    );
  }
}
