import type { CheckpointWrite, StoredCheckpoint } from '@crewline/runtime-state';
import type { EncodedNode } from '@crewline/runtime-state/internal';
import type pg from 'pg';
import { errorCode, postgresError, raised } from './errors.js';
import { type SchemaHandle, statementName } from './schema-handle.js';
import {
  detailOf,
  encodeWithIds,
  firstEventSent,
  parentHead,
  refusalOf,
  storedOf,
  writeStatement,
} from './write-checkpoint.js';

/**
 * Checkpoints written by one statement at most: a statement takes at most 65,535 values (22 per
 * checkpoint), and a longer group is written by several statements in one transaction.
 */
const checkpointsPerStatement = 64;

/** A checkpoint of the group, encoded and ready to send. */
interface EncodedWrite {
  checkpoint: CheckpointWrite;
  node: EncodedNode;
  values: unknown[];
}

/**
 * Stores consecutive checkpoints in one transaction on `client`: all of them or none. Each is
 * encoded against the one before it (its parent, when that is in the group) before anything is sent,
 * then the group goes as one statement calling `crewline_write` once per checkpoint, in order — one
 * round trip, one transaction, the lease checked by each call (several statements inside BEGIN and
 * COMMIT past {@link checkpointsPerStatement}). The heads are remembered only once the group is
 * committed: a rolled-back group leaves nothing a later write would continue, since its chunks are
 * gone. Any failure fails the group, even one a single write would try again (a parent removed
 * meanwhile, a stored id): the caller then writes the checkpoints one by one, each with its own
 * outcome.
 */
export async function writeGroup(
  client: pg.PoolClient,
  handle: SchemaHandle,
  checkpoints: readonly CheckpointWrite[],
  maxCheckpointBytes: number,
): Promise<StoredCheckpoint[]> {
  const inGroup = new Map<string, EncodedNode>();
  const encoded: EncodedWrite[] = [];
  for (const checkpoint of checkpoints) {
    const parentId = checkpoint.metadata.parentId;
    const previous =
      (parentId === null ? undefined : inGroup.get(parentId)) ??
      (await parentHead(client, handle, checkpoint));
    const head = await encodeWithIds(client, handle, checkpoint, previous);
    inGroup.set(checkpoint.metadata.id, head.node);
    const statement = writeStatement(
      handle,
      checkpoint,
      head,
      previous !== undefined,
      firstEventSent(checkpoint),
      maxCheckpointBytes,
    );
    encoded.push({ checkpoint, node: head.node, values: statement.values as unknown[] });
  }
  const slices: EncodedWrite[][] = [];
  for (let start = 0; start < encoded.length; start += checkpointsPerStatement)
    slices.push(encoded.slice(start, start + checkpointsPerStatement));
  const transaction = slices.length > 1;
  const stored: StoredCheckpoint[] = [];
  try {
    if (transaction) await client.query('BEGIN');
    for (const slice of slices) stored.push(...(await writeSlice(client, handle, slice, maxCheckpointBytes)));
    if (transaction) await client.query('COMMIT');
  } catch (error) {
    if (transaction) await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  for (const { checkpoint, node } of encoded) handle.heads.remember(checkpoint.metadata.id, node);
  return stored;
}

/** Writes `slice` with one statement; the rows come back in any order, each naming its position. */
async function writeSlice(
  client: pg.PoolClient,
  handle: SchemaHandle,
  slice: readonly EncodedWrite[],
  maxCheckpointBytes: number,
): Promise<StoredCheckpoint[]> {
  const text = handle.groupWriteSql(slice.length);
  let rows: { o_index: number; o_size: string }[];
  try {
    ({ rows } = await client.query<{ o_index: number; o_size: string }>({
      name: statementName(text),
      text,
      values: slice.flatMap((write) => write.values),
    }));
  } catch (error) {
    throw groupFailure(error, handle, slice, maxCheckpointBytes);
  }
  const stored = new Array<StoredCheckpoint>(slice.length);
  for (const row of rows) {
    const index = Number(row.o_index);
    stored[index] = storedOf(handle, slice[index]!.checkpoint, [row]);
  }
  return stored;
}

/** Why a group was rolled back, when one of the calls of `crewline_write` writing `slice` failed. */
function groupFailure(
  error: unknown,
  handle: SchemaHandle,
  slice: readonly EncodedWrite[],
  maxCheckpointBytes: number,
): unknown {
  const first = slice[0]!.checkpoint.metadata;
  const last = slice.at(-1)!.checkpoint.metadata;
  // The server does not say which call failed: the message names the group.
  const group = `the group "${first.id}" … "${last.id}" (${slice.length} checkpoints)`;
  const named = `a checkpoint of ${group}`;
  const refusal = refusalOf(
    error,
    handle,
    last.lineageId,
    named,
    maxCheckpointBytes,
    `${group} was not stored`,
  );
  if (refusal !== undefined) return refusal;
  const code = errorCode(error);
  const rolledBack = `so the group was rolled back and none of it stored; write its checkpoints one by one with write()`;
  if (code === '23505') {
    // The server's detail names the id: `Key (id)=(…) already exists.`
    const id = /\(id\)=\(([^)]*)\)/.exec(detailOf(error))?.[1];
    return postgresError(
      'conflict',
      `${id === undefined ? named : `checkpoint "${id}"`} is already stored in ${handle.location}, ${rolledBack}, which accepts a checkpoint stored before`,
      // The id in the details, as every provider's conflict for a stored id has it.
      { cause: error, ...(id === undefined ? {} : { details: { duplicateId: id } }) },
    );
  }
  if (code === raised.needEvents || code === raised.parentMissing) {
    return postgresError(
      'write_failed',
      `the parent of ${named} in ${handle.location} is not as this provider last saw it (removed, or stored with fewer events), ${rolledBack}, which places each one anew`,
      { cause: error },
    );
  }
  return error;
}
