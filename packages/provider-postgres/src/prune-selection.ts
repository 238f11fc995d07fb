import {
  type PruneCandidate,
  type PruneOptions,
  planPrune,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { storedFromRow } from '@crewline/runtime-state/internal';
import type pg from 'pg';
import { damagedRow, type MetadataRow, metadataColumns } from './metadata-row.js';
import type { SchemaHandle } from './schema-handle.js';

type CandidateRow = [
  id: string,
  createdAt: string,
  lineageId: string,
  parentId: string | null,
  branch: string,
];

/**
 * The checkpoints a prune removes, oldest first, by the one retention rule of `planPrune`: per run,
 * never a run's newest, never a fork point, never a fork's first checkpoint. A prune of one run (what
 * `maxCheckpoints` does after each write) reads that run's rows, the rows of other runs forked from
 * it (its fork points) and the parents its rows have in other runs (what makes a row of the run a
 * fork's first checkpoint), through the lineage, parent and primary key indexes; any other prune
 * reads every row's lineage and parent. The full metadata is read only for the rows chosen.
 */
export async function selectPruned(
  client: pg.PoolClient,
  handle: SchemaHandle,
  options: PruneOptions,
): Promise<StoredCheckpoint[]> {
  const s = handle.quoted;
  const columns = 'c.id, c.created_at, c.lineage_id, c.parent_id, c.branch';
  const { rows } =
    options.lineageId !== undefined
      ? await client.query<CandidateRow>({
          text: `SELECT ${columns} FROM ${s}.checkpoints c WHERE c.lineage_id = $1
            UNION ALL
            SELECT ${columns} FROM ${s}.checkpoints c
              WHERE c.parent_id IN (SELECT id FROM ${s}.checkpoints WHERE lineage_id = $1) AND c.lineage_id <> $1
            UNION ALL
            SELECT ${columns} FROM ${s}.checkpoints c
              WHERE c.id IN (SELECT parent_id FROM ${s}.checkpoints WHERE lineage_id = $1) AND c.lineage_id <> $1`,
          values: [options.lineageId],
          rowMode: 'array',
        })
      : await client.query<CandidateRow>({
          text: `SELECT ${columns} FROM ${s}.checkpoints c`,
          rowMode: 'array',
        });
  const candidates: PruneCandidate[] = rows.map(([id, createdAt, lineageId, parentId, branch]) => ({
    id,
    createdAt,
    lineageId,
    parentId,
    branch,
  }));
  const chosen = planPrune(candidates, options);
  if (chosen.length === 0) return [];
  const metadata = await client.query<MetadataRow>(
    `SELECT ${metadataColumns} FROM ${s}.checkpoints WHERE id = ANY($1::text[]) ORDER BY id`,
    [chosen.map((candidate) => candidate.id)],
  );
  return metadata.rows.map((row) => storedFromRow(row, handle.location, damagedRow));
}
