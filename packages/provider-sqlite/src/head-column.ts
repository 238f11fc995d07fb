import { type ChunkLoader, damagedData, headBody } from '@crewline/runtime-state/internal';
import { component } from './errors.js';

/**
 * The root body of a checkpoint's head from its `head` column: the id of the chunk that holds it,
 * or (rows written by schema versions 1 and 2) the body itself, which always starts with `{`.
 */
export function headColumnBody(head: string, load: ChunkLoader): string {
  if (head.charAt(0) === '{') return head;
  const id = Number(head);
  if (!Number.isSafeInteger(id)) {
    throw damagedData(component, 'the checkpoint head is neither a body nor a chunk id');
  }
  return headBody(component, id, load);
}
