import { open } from 'node:fs/promises';
import { CrewlineError } from '@crewline/events';
import { describeError, errorCode, jsonError } from '../errors.js';
import { idInText, readFlags, tooLargeFile } from './checkpoint-file.js';
import { nameMismatch } from './file-reference.js';

/**
 * The text of the file found for checkpoint `id` (`path`; the location `root` itself for a
 * standalone checkpoint file). A file over `maxBytes` is `too_large` before it is read (never
 * loaded into memory), one removed meanwhile `not_found`, and the file must hold `id`: a file
 * renamed over another is never read as it.
 */
export async function readCheckpointText(
  root: string,
  path: string,
  id: string,
  maxBytes: number,
): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  let text: string;
  try {
    handle = await open(path, readFlags);
    const { size } = await handle.stat();
    if (size > maxBytes) throw tooLargeFile(path, size, maxBytes);
    text = await handle.readFile('utf8');
  } catch (error) {
    if (CrewlineError.isInstance(error)) throw error;
    if (errorCode(error) === 'ENOENT')
      throw jsonError('not_found', `checkpoint "${id}" was removed while being read`);
    throw jsonError('read_failed', `cannot read checkpoint "${path}": ${describeError(error)}`, {
      cause: error,
    });
  } finally {
    await handle?.close();
  }
  const held = idInText(text, path, maxBytes);
  if (held !== id) {
    if (path === root)
      throw jsonError('not_found', `checkpoint file "${root}" holds checkpoint "${held}", not "${id}"`);
    throw nameMismatch(path, id, held);
  }
  return text;
}
