import { CrewlineError } from '@crewline/events';
import type { CheckpointWrite, StoredCheckpoint } from '@crewline/runtime-state';
import { rewrittenCheckpoint } from '@crewline/runtime-state/internal';
import type pg from 'pg';
import { component } from './errors.js';
import { damagedRow, type MetadataRow, metadataColumns } from './metadata-row.js';
import type { SchemaHandle } from './schema-handle.js';

/**
 * The checkpoints `checkpoints` as stored, when every one of them is; undefined when not all are.
 * What a write whose answer never came back (its connection was lost, before or after its commit)
 * looks for before it is sent again, so that a checkpoint is neither stored twice nor lost. A write,
 * or a group, commits whole or not at all: some of a group stored means someone else stored them,
 * and the group sent again says so (`conflict`). A stored checkpoint that is not the one written is
 * a `conflict` here too, as a write of a stored id is.
 */
export async function storedAlready(
  client: pg.PoolClient,
  handle: SchemaHandle,
  checkpoints: readonly CheckpointWrite[],
): Promise<StoredCheckpoint[] | undefined> {
  const { rows } = await client.query<MetadataRow>(
    `SELECT ${metadataColumns} FROM ${handle.quoted}.checkpoints WHERE id = ANY($1::text[])`,
    [checkpoints.map((checkpoint) => checkpoint.metadata.id)],
  );
  if (rows.length < checkpoints.length) return undefined;
  const byId = new Map(rows.map((row) => [row.id, row]));
  return checkpoints.map((checkpoint) =>
    rewrittenCheckpoint(
      component,
      byId.get(checkpoint.metadata.id),
      checkpoint.metadata,
      handle.location,
      damagedRow,
    ),
  );
}

/**
 * A group sent once more after its connection was lost: returned as stored when every checkpoint
 * is, else written again. The first attempt may still be running on the server when looked for (the
 * server notices a lost client only when it next talks to it): the group sent again then waits for
 * its rows and fails on them (`conflict`) once it committed, so the group is looked for once more.
 */
export async function retriedGroup(
  client: pg.PoolClient,
  handle: SchemaHandle,
  checkpoints: readonly CheckpointWrite[],
  write: (client: pg.PoolClient) => Promise<StoredCheckpoint[]>,
): Promise<StoredCheckpoint[]> {
  const stored = await storedAlready(client, handle, checkpoints);
  if (stored !== undefined) return stored;
  try {
    return await write(client);
  } catch (error) {
    if (!CrewlineError.hasCode(error, 'conflict')) throw error;
    const storedMeanwhile = await storedAlready(client, handle, checkpoints);
    if (storedMeanwhile === undefined) throw error;
    return storedMeanwhile;
  }
}
