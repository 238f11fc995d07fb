import type { CheckpointMetadata, EntitySummary, StoredCheckpoint } from '@crewline/runtime-state';
import { postgresError } from './errors.js';

/** The metadata columns of the `checkpoints` table, as a list query returns them. */
export interface MetadataRow {
  id: string;
  created_at: string;
  lineage_id: string;
  parent_id: string | null;
  branch: string;
  trigger: string;
  entities: string;
  event_count: number;
  /** A bigint column: a string as pg returns it, a number once computed here. */
  size_bytes: number | string;
}

export const metadataColumns =
  'id, created_at, lineage_id, parent_id, branch, "trigger", entities, event_count, size_bytes';

/**
 * `JSON.stringify(metadata)` rebuilt from the columns. A checkpoint whose metadata serializes
 * differently (other key order) keeps its text verbatim in `metadata_text` instead.
 */
export function canonicalMetadataText(row: Omit<MetadataRow, 'size_bytes'>): string {
  const parent = row.parent_id === null ? 'null' : JSON.stringify(row.parent_id);
  return `{"id":${JSON.stringify(row.id)},"createdAt":${JSON.stringify(row.created_at)},"lineageId":${JSON.stringify(row.lineage_id)},"parentId":${parent},"branch":${JSON.stringify(row.branch)},"trigger":${JSON.stringify(row.trigger)},"entities":${row.entities},"eventCount":${row.event_count}}`;
}

const canonicalKeys = [
  'id',
  'createdAt',
  'lineageId',
  'parentId',
  'branch',
  'trigger',
  'entities',
  'eventCount',
];

/**
 * True when `JSON.stringify(metadata)` is sure to equal {@link canonicalMetadataText} of its row: the
 * canonical keys in the canonical order, and values that serialize the same way there. The write then
 * skips serializing the metadata a second time. Expects ids, branch and event count already checked.
 */
export function hasCanonicalShape(metadata: CheckpointMetadata): boolean {
  const keys = Object.keys(metadata);
  if (keys.length !== canonicalKeys.length) return false;
  for (let index = 0; index < keys.length; index += 1) if (keys[index] !== canonicalKeys[index]) return false;
  const { entities } = metadata;
  return (
    typeof metadata.createdAt === 'string' &&
    typeof metadata.trigger === 'string' &&
    Number.isSafeInteger(metadata.eventCount) &&
    Array.isArray(entities) &&
    typeof (entities as { toJSON?: unknown }).toJSON !== 'function'
  );
}

/**
 * A listed checkpoint from a row read in raw mode (an array, in {@link metadataColumns} order):
 * listing 10,000 checkpoints builds 10,000 of these, so no intermediate row object is made.
 */
export function storedFromRawRow(row: unknown[], location: string): StoredCheckpoint {
  const id = row[0] as string;
  let entities: EntitySummary[];
  try {
    entities = JSON.parse(row[6] as string) as EntitySummary[];
  } catch (error) {
    throw damagedSummaries(id, location, error);
  }
  return {
    id,
    createdAt: row[1] as string,
    lineageId: row[2] as string,
    parentId: row[3] as string | null,
    branch: row[4] as string,
    trigger: row[5] as string,
    entities,
    eventCount: row[7] as number,
    reference: `${location}#${id}`,
    // bigint columns arrive as strings
    sizeBytes: Number(row[8]),
  };
}

function damagedSummaries(id: string, location: string, cause: unknown) {
  return postgresError(
    'corrupt_checkpoint',
    `checkpoint "${id}" in ${location} has damaged entity summaries; delete it with \`crewline checkpoint prune\` or restore the schema from a backup`,
    { cause },
  );
}

/** A listed checkpoint from its row. */
export function storedFromRow(row: MetadataRow, location: string): StoredCheckpoint {
  let entities: EntitySummary[];
  try {
    entities = JSON.parse(row.entities) as EntitySummary[];
  } catch (error) {
    throw damagedSummaries(row.id, location, error);
  }
  const metadata: CheckpointMetadata = {
    id: row.id,
    createdAt: row.created_at,
    lineageId: row.lineage_id,
    parentId: row.parent_id,
    branch: row.branch,
    trigger: row.trigger,
    entities,
    eventCount: row.event_count,
  };
  return { ...metadata, reference: `${location}#${row.id}`, sizeBytes: Number(row.size_bytes) };
}
