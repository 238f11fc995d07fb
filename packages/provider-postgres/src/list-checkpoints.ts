// A listing of a location's checkpoints, filtered and paged in the database. Split from
// postgres-provider.ts, whose `list` and `latest` read through it.
import type { ListQuery, StoredCheckpoint } from '@crewline/runtime-state';
import { checkId, checkQuery, storedFromRawRow } from '@crewline/runtime-state/internal';
import type pg from 'pg';
import { component, postgresError } from './errors.js';
import { damagedRow, metadataColumns } from './metadata-row.js';
import type { SchemaHandle } from './schema-handle.js';

/** A listing query, with paging: `list` of 100,000 checkpoints never has to load them at once. */
export interface PostgresListQuery extends ListQuery {
  /**
   * At most this many checkpoints: the newest ones that match (still listed oldest first). Default:
   * no limit.
   */
  limit?: number;
  /**
   * Only checkpoints whose id sorts before this one (ids sort by creation time). The next page of a
   * listing is `{ limit, before: page[0].id }`. Default: no bound.
   */
  before?: string;
}

/** Refuses a query the listing cannot run, before any connection is taken. */
export function checkListQuery(query: PostgresListQuery): void {
  checkQuery(component, query);
  const { limit, before } = query;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
    throw postgresError(
      'invalid_argument',
      `list limit must be a whole number of at least 1, got ${String(limit)}`,
    );
  }
  if (before !== undefined) checkId(component, before);
}

/** The checkpoints of `handle`'s location that `query` (checked) selects, oldest first. */
export async function listCheckpoints(
  client: pg.PoolClient,
  handle: SchemaHandle,
  query: PostgresListQuery,
): Promise<StoredCheckpoint[]> {
  const { limit, before } = query;
  const conditions: string[] = [];
  const values: unknown[] = [];
  const where = (condition: string, value: unknown) => {
    values.push(value);
    conditions.push(`${condition} $${values.length}`);
  };
  if (query.branch !== undefined) where('branch =', query.branch);
  if (query.lineageId !== undefined) where('lineage_id =', query.lineageId);
  if (before !== undefined) where('id <', before);
  const filter = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
  let text = `SELECT ${metadataColumns} FROM ${handle.quoted}.checkpoints ${filter} ORDER BY id`;
  if (limit !== undefined) {
    values.push(limit);
    text = `SELECT * FROM (${text} DESC LIMIT $${values.length}) page ORDER BY id`;
  }
  const { rows } = await client.query<unknown[]>({ text, values, rowMode: 'array' });
  const listed = new Array<StoredCheckpoint>(rows.length);
  for (let index = 0; index < rows.length; index += 1)
    listed[index] = storedFromRawRow(rows[index]!, handle.location, damagedRow);
  return listed;
}
