import {
  type ChunkLoader,
  damagedData,
  type EncodedNode,
  headBody,
  seedHead,
} from '@crewline/runtime-state/internal';
import type { Connection } from '../database/connection.js';
import type { Statements } from '../database/statements.js';
import { component } from '../errors.js';

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

/** The chunks of a checkpoint's tree, read by id from `statements` (a missing one is damaged data). */
export function chunkLoader(statements: Pick<Statements, 'chunkBody'>): ChunkLoader {
  return (id) => {
    const body = statements.chunkBody.get(id);
    if (typeof body !== 'string') throw damagedData(component, `chunk ${id} is missing`);
    return body;
  };
}

/**
 * The head tree a new checkpoint is compared with: its parent's, from the connection's cache of
 * recent heads or decoded from the parent's `head` column. Undefined when the parent is damaged: that
 * only costs storage, the new head is then written whole.
 */
export function previousHead(
  connection: Connection,
  parentId: string,
  parentHead: string,
): EncodedNode | undefined {
  const cached = connection.heads.get(parentId);
  if (cached !== undefined) return cached;
  const load = chunkLoader(connection.statements);
  try {
    return seedHead(component, headColumnBody(parentHead, load), load);
  } catch {
    return undefined;
  }
}
