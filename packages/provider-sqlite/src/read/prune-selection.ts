import {
  type PruneCandidate,
  type PruneOptions,
  planPrune,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { storedFromRow } from '@crewline/runtime-state/internal';
import type { Connection } from '../database/connection.js';
import { damagedRow, type MetadataRow } from './metadata-row.js';

interface CandidateRow {
  id: string;
  created_at: string;
  lineage_id: string;
  parent_id: string | null;
  branch: string;
}

/**
 * The checkpoints a prune removes, oldest first (inside the caller's transaction), by the one
 * retention rule of `planPrune`: per run, never a run's newest, never a fork point. Fork points are
 * found across the whole database, so every row's lineage and parent are read; the full metadata is
 * built only for the rows chosen.
 */
export function selectPruned(connection: Connection, options: PruneOptions): StoredCheckpoint[] {
  const { db, location } = connection;
  const rows = db
    .prepare('SELECT id, created_at, lineage_id, parent_id, branch FROM checkpoints')
    .all() as CandidateRow[];
  const candidates: PruneCandidate[] = rows.map((row) => ({
    id: row.id,
    createdAt: row.created_at,
    lineageId: row.lineage_id,
    parentId: row.parent_id,
    branch: row.branch,
  }));
  const chosen = planPrune(candidates, options);
  if (chosen.length === 0) return [];
  return chosen.map((candidate) =>
    storedFromRow(connection.statements.metadataById.get(candidate.id) as MetadataRow, location, damagedRow),
  );
}
