import type { ListQuery, StoredCheckpoint } from '@crewline/runtime-state';
import { storedFromRawRow, storedFromRow } from '@crewline/runtime-state/internal';
import type { Connection } from '../database/connection.js';
import { damagedRow, type MetadataRow } from './metadata-row.js';

/**
 * The listing of `query`, oldest first, with references under `location` as the caller spelled it;
 * runs inside the caller's read transaction.
 */
export function listCheckpoints(
  connection: Connection,
  location: string,
  query: ListQuery,
): StoredCheckpoint[] {
  const { list } = connection.statements;
  const rows = (
    query.branch !== undefined && query.lineageId !== undefined
      ? list.both.all(query.branch, query.lineageId)
      : query.branch !== undefined
        ? list.branch.all(query.branch)
        : query.lineageId !== undefined
          ? list.lineage.all(query.lineageId)
          : list.all.all()
  ) as unknown[][];
  const listed = new Array<StoredCheckpoint>(rows.length);
  for (let index = 0; index < rows.length; index += 1)
    listed[index] = storedFromRawRow(rows[index]!, location, damagedRow);
  return listed;
}

/** The newest checkpoint of `query` (see {@link listCheckpoints}). */
export function latestCheckpoint(
  connection: Connection,
  location: string,
  query: ListQuery,
): StoredCheckpoint | undefined {
  const { latest } = connection.statements;
  const row = (
    query.branch !== undefined && query.lineageId !== undefined
      ? latest.both.get(query.branch, query.lineageId)
      : query.branch !== undefined
        ? latest.branch.get(query.branch)
        : query.lineageId !== undefined
          ? latest.lineage.get(query.lineageId)
          : latest.all.get()
  ) as MetadataRow | undefined;
  return row === undefined ? undefined : storedFromRow(row, location, damagedRow);
}
