import type { PruneOptions, StoredCheckpoint } from '@crewline/runtime-state';
import type pg from 'pg';
import { recordRemoved } from './garbage-collector.js';
import { selectPruned } from './prune-selection.js';
import { lockKey } from './schema.js';
import type { SchemaHandle } from './schema-handle.js';

/** What a removal did: and whether enough has been removed for garbage collection to be due. */
export interface Removal<T> {
  removed: T;
  collect: boolean;
}

/** Runs `remove` in a transaction of its own, rolled back when it throws. */
async function inTransaction<T>(client: pg.PoolClient, remove: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await remove();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * Removes the checkpoints `options` prunes, chosen again under the schema's advisory lock, held
 * exclusively: writes hold it shared, so no write can fork from a checkpoint while it is removed.
 */
export function pruneCheckpoints(
  client: pg.PoolClient,
  handle: SchemaHandle,
  options: PruneOptions,
): Promise<Removal<StoredCheckpoint[]>> {
  return inTransaction(client, async () => {
    await client.query(`SELECT pg_advisory_xact_lock(${lockKey(handle.schema)})`);
    const chosen = await selectPruned(client, handle, options);
    await client.query(`DELETE FROM ${handle.quoted}.checkpoints WHERE id = ANY($1::text[])`, [
      chosen.map((stored) => stored.id),
    ]);
    return { removed: chosen, collect: await recordRemoved(client, handle, chosen.length) };
  });
}

/** Removes checkpoint `id`; `removed` says whether it was there. */
export function deleteCheckpoint(
  client: pg.PoolClient,
  handle: SchemaHandle,
  id: string,
): Promise<Removal<boolean>> {
  return inTransaction(client, async () => {
    const result = await client.query(`DELETE FROM ${handle.quoted}.checkpoints WHERE id = $1`, [id]);
    const deleted = (result.rowCount ?? 0) > 0;
    return { removed: deleted, collect: deleted && (await recordRemoved(client, handle, 1)) };
  });
}
