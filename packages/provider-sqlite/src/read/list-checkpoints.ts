import type { ListQuery, StoredCheckpoint } from '@crewline/runtime-state';
import { storedFromRawRow, storedFromRow } from '@crewline/runtime-state/internal';
import type { Connection } from '../database/connection.js';
import type { FilteredStatements, Statement } from '../database/statements.js';
import { damagedRow, type MetadataRow } from './metadata-row.js';

/** The statement of `prepared` for the filters `query` sets, and the values to bind. */
function forQuery(prepared: FilteredStatements, query: ListQuery): [Statement, string[]] {
  const { branch, lineageId } = query;
  if (branch !== undefined && lineageId !== undefined) return [prepared.both, [branch, lineageId]];
  if (branch !== undefined) return [prepared.branch, [branch]];
  if (lineageId !== undefined) return [prepared.lineage, [lineageId]];
  return [prepared.all, []];
}

/**
 * The listing of `query`, oldest first, with references under `location` as the caller spelled it;
 * runs inside the caller's read transaction.
 */
export function listCheckpoints(
  connection: Connection,
  location: string,
  query: ListQuery,
): StoredCheckpoint[] {
  const [statement, values] = forQuery(connection.statements.list, query);
  const rows = statement.all(...values) as unknown[][];
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
  const [statement, values] = forQuery(connection.statements.latest, query);
  const row = statement.get(...values) as MetadataRow | undefined;
  return row === undefined ? undefined : storedFromRow(row, location, damagedRow);
}
