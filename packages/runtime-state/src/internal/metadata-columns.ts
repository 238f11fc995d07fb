import { CrewlineError } from '@crewline/events';
import type { CheckpointMetadata, EntitySummary } from '../document.js';
import type { StoredCheckpoint } from '../provider.js';

/**
 * The metadata of a checkpoint as a database provider keeps it in columns: `entities` is the JSON
 * text of the summaries. A listing reads these columns, and `size_bytes`, in this order.
 */
export interface MetadataColumns {
  id: string;
  created_at: string;
  lineage_id: string;
  parent_id: string | null;
  branch: string;
  trigger: string;
  entities: string;
  event_count: number;
}

/** The columns of `metadata`; `entitiesText` is `JSON.stringify(metadata.entities)`. */
export function metadataColumnsOf(metadata: CheckpointMetadata, entitiesText: string): MetadataColumns {
  return {
    id: metadata.id,
    created_at: metadata.createdAt,
    lineage_id: metadata.lineageId,
    parent_id: metadata.parentId,
    branch: metadata.branch,
    trigger: metadata.trigger,
    entities: entitiesText,
    event_count: metadata.eventCount,
  };
}

/**
 * `JSON.stringify(metadata)` rebuilt from the columns. A checkpoint whose metadata serializes
 * differently (other key order) keeps its text verbatim instead.
 */
export function canonicalMetadataText(row: MetadataColumns): string {
  const parent = row.parent_id === null ? 'null' : JSON.stringify(row.parent_id);
  return `{"id":${JSON.stringify(row.id)},"createdAt":${JSON.stringify(row.created_at)},"lineageId":${JSON.stringify(row.lineage_id)},"parentId":${parent},"branch":${JSON.stringify(row.branch)},"trigger":${JSON.stringify(row.trigger)},"entities":${row.entities},"eventCount":${row.event_count}}`;
}

// The key order of the canonical text, read from the text itself so that the two cannot disagree.
const canonicalKeys = Object.keys(
  JSON.parse(
    canonicalMetadataText({
      id: '',
      created_at: '',
      lineage_id: '',
      parent_id: null,
      branch: '',
      trigger: '',
      entities: '[]',
      event_count: 0,
    }),
  ),
);

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
 * What a write returns for `metadata`. With `canonicalShape` (see {@link hasCanonicalShape}) a
 * literal in the canonical key order: every listed checkpoint then has one object shape, where a
 * spread would migrate shapes key by key.
 */
export function writtenCheckpoint(
  metadata: CheckpointMetadata,
  reference: string,
  sizeBytes: number,
  canonicalShape: boolean,
): StoredCheckpoint {
  return canonicalShape
    ? {
        id: metadata.id,
        createdAt: metadata.createdAt,
        lineageId: metadata.lineageId,
        parentId: metadata.parentId,
        branch: metadata.branch,
        trigger: metadata.trigger,
        entities: metadata.entities,
        eventCount: metadata.eventCount,
        reference,
        sizeBytes,
      }
    : { ...metadata, reference, sizeBytes };
}

/**
 * The provider's error for the row of checkpoint `id` in `location` whose entity summaries are not
 * JSON: names the checkpoint and how to recover.
 */
export type DamagedSummaries = (id: string, location: string, cause: unknown) => CrewlineError;

/**
 * A listed checkpoint from a row read as an array, in {@link MetadataColumns} order then `size_bytes`
 * (a number, or a bigint column's string): listing 10,000 checkpoints builds 10,000 of these, so no
 * intermediate row object is made.
 */
export function storedFromRawRow(
  row: readonly unknown[],
  location: string,
  damagedSummaries: DamagedSummaries,
): StoredCheckpoint {
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
    sizeBytes: Number(row[8]),
  };
}

/** A listed checkpoint from its row (`size_bytes` a number, or a bigint column's string). */
export function storedFromRow(
  row: MetadataColumns & { size_bytes: number | string },
  location: string,
  damagedSummaries: DamagedSummaries,
): StoredCheckpoint {
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

/**
 * What a write finds under its id when the id is taken: a retried write whose first attempt did
 * commit gets the stored checkpoint back, when `existing` (the row under the id) is that checkpoint;
 * another checkpoint under a stored id is a `conflict` of `component`.
 */
export function rewrittenCheckpoint(
  component: string,
  existing: (MetadataColumns & { size_bytes: number | string }) | undefined,
  metadata: CheckpointMetadata,
  location: string,
  damagedSummaries: DamagedSummaries,
): StoredCheckpoint {
  if (
    existing !== undefined &&
    existing.lineage_id === metadata.lineageId &&
    existing.branch === metadata.branch &&
    existing.parent_id === metadata.parentId &&
    existing.event_count === metadata.eventCount &&
    existing.created_at === metadata.createdAt
  ) {
    return storedFromRow(existing, location, damagedSummaries);
  }
  throw new CrewlineError(
    component,
    'conflict',
    `checkpoint id "${metadata.id}" already exists in ${location} with other content; checkpoint ids must be unique`,
  );
}
