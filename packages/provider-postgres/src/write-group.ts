import type { CheckpointWrite, StoredCheckpoint } from '@crewline/runtime-state';
import type pg from 'pg';
import { errorCode, postgresError, raised } from './errors.js';
import type { SchemaHandle } from './schema-handle.js';
import {
  encodeWithIds,
  firstEventSent,
  parentHead,
  refusalOf,
  storedOf,
  writeStatement,
} from './write-checkpoint.js';

/**
 * Stores consecutive checkpoints in one transaction on `client` (BEGIN, one `crewline_write` call
 * each, COMMIT): all of them or none. Each continues the one before it, its head remembered inside
 * the transaction; when the group fails, those heads are forgotten again, since their chunks were
 * rolled back and a later write must not name them. Any failure fails the group, even one a single
 * write would try again (the caller then writes them one by one, each with its own outcome): a
 * failed statement aborts the transaction, and the whole group is what must be all or nothing.
 */
export async function writeGroup(
  client: pg.PoolClient,
  handle: SchemaHandle,
  checkpoints: readonly CheckpointWrite[],
  maxCheckpointBytes: number,
): Promise<StoredCheckpoint[]> {
  const remembered: string[] = [];
  try {
    await client.query('BEGIN');
    const stored: StoredCheckpoint[] = [];
    for (const checkpoint of checkpoints) {
      const previous = await parentHead(client, handle, checkpoint);
      const encoded = await encodeWithIds(client, handle, checkpoint, previous);
      const statement = writeStatement(
        handle,
        checkpoint,
        encoded,
        previous !== undefined,
        firstEventSent(checkpoint),
        maxCheckpointBytes,
      );
      let rows: { o_size: string }[];
      try {
        ({ rows } = await client.query<{ o_size: string }>(statement));
      } catch (error) {
        throw groupFailure(error, handle, checkpoint, maxCheckpointBytes);
      }
      handle.heads.remember(checkpoint.metadata.id, encoded.node);
      remembered.push(checkpoint.metadata.id);
      stored.push(storedOf(handle, checkpoint, rows));
    }
    await client.query('COMMIT');
    return stored;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    // Also after a failed COMMIT, whose outcome is unknown: a later write then reads the head back.
    for (const id of remembered) handle.heads.forget(id);
    throw error;
  }
}

/** Why a group was rolled back, when `checkpoint`'s call of `crewline_write` failed. */
function groupFailure(
  error: unknown,
  handle: SchemaHandle,
  checkpoint: CheckpointWrite,
  maxCheckpointBytes: number,
): unknown {
  const refusal = refusalOf(error, handle, checkpoint, maxCheckpointBytes);
  if (refusal !== undefined) return refusal;
  const { id } = checkpoint.metadata;
  const code = errorCode(error);
  if (code === '23505') {
    return postgresError(
      'conflict',
      `checkpoint "${id}" is already stored in ${handle.location}, so its group was rolled back and none of it stored; write the group's checkpoints one by one with write(), which accepts a checkpoint stored before`,
      { cause: error },
    );
  }
  if (code === raised.needEvents || code === raised.parentMissing) {
    return postgresError(
      'write_failed',
      `the parent of checkpoint "${id}" in ${handle.location} is not as this provider last wrote it (removed, or stored with fewer events), so its group was rolled back and none of it stored; write the group's checkpoints one by one with write(), which places each one anew`,
      { cause: error },
    );
  }
  return error;
}
