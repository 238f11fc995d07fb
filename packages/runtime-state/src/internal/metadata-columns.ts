import type { CrewlineError } from '@crewline/events';
import type { CheckpointMetadata, EntitySummary } from '../document.js';
import { isValidBranchName, isValidCheckpointId } from '../ids.js';
import type { StoredCheckpoint } from '../provider.js';
import { isSameCheckpoint, storedIdConflict } from './stored-id-conflict.js';

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
 * The provider's error for a row of `location` that is not what the provider writes (a damaged or
 * tampered database): `id` is the row's checkpoint id when that column is still a valid id, `problem`
 * says which column holds what. The message names the database and how to recover.
 */
export type DamagedRow = (
  id: string | undefined,
  location: string,
  problem: string,
  cause?: unknown,
) => CrewlineError;

/** What a damaged column holds, for a message: its type, never its (possibly huge, or binary) content. */
function describeColumn(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (value instanceof Uint8Array) return 'a blob';
  if (typeof value === 'string') return value.length === 0 ? 'empty text' : 'text';
  return `a ${typeof value}`;
}

function isSummary(value: unknown): value is EntitySummary {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const summary = value as Record<string, unknown>;
  return (
    (summary.kind === 'crew' || summary.kind === 'flow' || summary.kind === 'agent') &&
    typeof summary.id === 'string' &&
    typeof summary.name === 'string' &&
    (summary.status === undefined || typeof summary.status === 'string') &&
    (summary.completed === undefined || Number.isSafeInteger(summary.completed)) &&
    (summary.total === undefined || Number.isSafeInteger(summary.total))
  );
}

/**
 * A listed checkpoint from the values of a row, in {@link MetadataColumns} order then `size_bytes`
 * (a number, or a bigint column's string). Every column is checked to be what a write stores, so a
 * damaged database gives a typed error naming the row and column, never a listing that breaks its
 * readers; plain type checks, since a listing may build tens of thousands of these.
 */
function storedFromValues(
  id: unknown,
  createdAt: unknown,
  lineageId: unknown,
  parentId: unknown,
  branch: unknown,
  trigger: unknown,
  entitiesText: unknown,
  eventCount: unknown,
  sizeBytes: unknown,
  location: string,
  damagedRow: DamagedRow,
): StoredCheckpoint {
  if (typeof id !== 'string' || !isValidCheckpointId(id))
    throw damagedRow(undefined, location, `its id is ${describeColumn(id)} that is not a checkpoint id`);
  const damaged = (column: string, value: unknown, expected: string) =>
    damagedRow(id, location, `${column} is ${describeColumn(value)}, not ${expected}`);
  // As strict as a write is (checkCheckpointWrite), no stricter: a listing must not refuse rows a
  // provider accepted.
  if (typeof createdAt !== 'string') throw damaged('created_at', createdAt, 'text');
  if (typeof lineageId !== 'string' || lineageId.length === 0 || lineageId.length > 200)
    throw damaged('lineage_id', lineageId, 'a lineage id');
  if (parentId !== null && (typeof parentId !== 'string' || !isValidCheckpointId(parentId)))
    throw damaged('parent_id', parentId, 'a checkpoint id or NULL');
  if (typeof branch !== 'string' || !isValidBranchName(branch))
    throw damaged('branch', branch, 'a branch name');
  if (typeof trigger !== 'string') throw damaged('trigger', trigger, 'text');
  if (typeof eventCount !== 'number' || !Number.isSafeInteger(eventCount) || eventCount < 0)
    throw damaged('event_count', eventCount, 'a count');
  const size =
    typeof sizeBytes === 'number' || typeof sizeBytes === 'string' ? Number(sizeBytes) : Number.NaN;
  if (!Number.isSafeInteger(size) || size < 0) throw damaged('size_bytes', sizeBytes, 'a size');
  if (typeof entitiesText !== 'string') throw damaged('entities', entitiesText, 'JSON text');
  let entities: unknown;
  try {
    entities = JSON.parse(entitiesText);
  } catch (error) {
    throw damagedRow(id, location, 'entities is not JSON', error);
  }
  if (!Array.isArray(entities) || !entities.every(isSummary))
    throw damagedRow(id, location, 'entities is not a list of entity summaries');
  return {
    id,
    createdAt,
    lineageId,
    parentId,
    branch,
    trigger,
    entities,
    eventCount,
    reference: `${location}#${id}`,
    sizeBytes: size,
  };
}

/**
 * A listed checkpoint from a row read as an array, in {@link MetadataColumns} order then `size_bytes`
 * (a number, or a bigint column's string): listing 10,000 checkpoints builds 10,000 of these, so no
 * intermediate row object is made. A damaged row throws `damagedRow`'s error.
 */
export function storedFromRawRow(
  row: readonly unknown[],
  location: string,
  damagedRow: DamagedRow,
): StoredCheckpoint {
  return storedFromValues(
    row[0],
    row[1],
    row[2],
    row[3],
    row[4],
    row[5],
    row[6],
    row[7],
    row[8],
    location,
    damagedRow,
  );
}

/** A listed checkpoint from its row (`size_bytes` a number, or a bigint column's string). */
export function storedFromRow(
  row: MetadataColumns & { size_bytes: number | string },
  location: string,
  damagedRow: DamagedRow,
): StoredCheckpoint {
  return storedFromValues(
    row.id,
    row.created_at,
    row.lineage_id,
    row.parent_id,
    row.branch,
    row.trigger,
    row.entities,
    row.event_count,
    row.size_bytes,
    location,
    damagedRow,
  );
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
  damagedRow: DamagedRow,
): StoredCheckpoint {
  if (
    existing !== undefined &&
    isSameCheckpoint(
      {
        lineageId: existing.lineage_id,
        branch: existing.branch,
        parentId: existing.parent_id,
        eventCount: existing.event_count,
        createdAt: existing.created_at,
      },
      metadata,
    )
  ) {
    return storedFromRow(existing, location, damagedRow);
  }
  throw storedIdConflict(component, metadata.id, location);
}
