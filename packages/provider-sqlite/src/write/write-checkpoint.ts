import { CrewlineError } from '@crewline/events';
import type { CheckpointWrite, StoredCheckpoint } from '@crewline/runtime-state';
import {
  type CheckedNames,
  canonicalMetadataText,
  checkCheckpointWrite,
  type EncodedNode,
  encodedDocumentSize,
  hasCanonicalShape,
  metadataColumnsOf,
  rewrittenCheckpoint,
  TreeEncoder,
  writtenCheckpoint,
} from '@crewline/runtime-state/internal';
import type { Connection, LastWrite } from '../database/connection.js';
import { component, sqliteCode, sqliteError } from '../errors.js';
import type { Pending } from '../layout/event-references.js';
import { type ParentEvents, placeEvents } from '../layout/event-streams.js';
import { previousHead } from '../layout/head-tree.js';
import { checkWriteLease } from '../leases/leases.js';
import { damagedRow, ENTITIES_CHUNK_BYTES, type MetadataRow } from '../read/metadata-row.js';

/**
 * Refuses a checkpoint whose names could escape the database's meaning, or whose shape is off.
 * `checked` are the names the caller's previous write checked (and found valid): a run's next write
 * has the same branch, and the last id as its parent, so most writes skip checking them again.
 * Returns the names to pass with the next write.
 */
export function checkWritable(checkpoint: CheckpointWrite, checked: CheckedNames): CheckedNames {
  checkCheckpointWrite(component, checkpoint, checked);
  return { id: checkpoint.metadata.id, branch: checkpoint.metadata.branch };
}

interface ParentRow extends ParentEvents {
  head: string;
}

/**
 * Thrown inside the insert transaction (which rolls back) when the checkpoint's id is already
 * stored; the caller then decides with {@link existingCheckpoint} whether it is the same checkpoint.
 */
function duplicateCheckpoint(connection: Connection, id: string): CrewlineError {
  return sqliteError('conflict', `checkpoint id "${id}" is already stored in ${connection.location}`, {
    details: { duplicateId: id },
  });
}

/** True for the error {@link insertCheckpoint} throws when the id is already stored. */
export function isDuplicateCheckpoint(error: unknown): boolean {
  return CrewlineError.hasCode(error, 'conflict') && typeof error.details?.duplicateId === 'string';
}

/**
 * A checkpoint written again (a retried write whose first attempt did commit) is accepted when it
 * is the same one; another checkpoint under a stored id is a conflict.
 */
export function existingCheckpoint(connection: Connection, checkpoint: CheckpointWrite): StoredCheckpoint {
  const { metadata } = checkpoint;
  const existing = connection.statements.metadataById.get(metadata.id) as MetadataRow | undefined;
  return rewrittenCheckpoint(component, existing, metadata, connection.location, damagedRow);
}

/** What {@link insertCheckpoint} stored. */
export interface InsertResult {
  stored: StoredCheckpoint;
  head: EncodedNode;
  lastWrite: LastWrite;
  /** The value chunks this write stored, for {@link Connection.rememberValues} once it committed. */
  values: [string, number][];
  /** The long event strings this write stored, for `connection.eventStrings.remember` once it committed. */
  eventStrings: Pending;
}

/**
 * The `head` column of the checkpoint each {@link LastWrite} describes (the id of its root chunk):
 * the next write, when its head did not change, names the same chunk instead of storing it again.
 * Valid while the `LastWrite` is: it is only read for a write that continues it.
 */
const headColumns = new WeakMap<LastWrite, string>();

/** True for a `head` column that names a chunk (rows of schema versions 1 and 2 hold the body, `{...`). */
function namesChunk(head: string): boolean {
  return head !== '' && head.charAt(0) !== '{';
}

type Insert = (checkpoint: CheckpointWrite, maxCheckpointBytes: number) => InsertResult;
const inserts = new WeakMap<Connection, ReturnType<typeof insertTransaction>>();

function insertTransaction(connection: Connection) {
  return connection.db.transaction<Insert>((checkpoint, maxCheckpointBytes) =>
    insertCheckpoint(connection, checkpoint, maxCheckpointBytes),
  );
}

/**
 * Stores one checkpoint in its own `BEGIN IMMEDIATE` transaction on `connection` (the transaction
 * function is made once per connection and reused by every write).
 */
export function insertCheckpointImmediately(
  connection: Connection,
  checkpoint: CheckpointWrite,
  maxCheckpointBytes: number,
): InsertResult {
  let transaction = inserts.get(connection);
  if (transaction === undefined) {
    transaction = insertTransaction(connection);
    inserts.set(connection, transaction);
  }
  return transaction.immediate(checkpoint, maxCheckpointBytes);
}

type InsertGroup = (
  checkpoints: readonly CheckpointWrite[],
  maxCheckpointBytes: number,
  inserted: (result: InsertResult) => void,
) => StoredCheckpoint[];
const groupInserts = new WeakMap<Connection, ReturnType<typeof groupTransaction>>();

function groupTransaction(connection: Connection) {
  return connection.db.transaction<InsertGroup>((checkpoints, maxCheckpointBytes, inserted) =>
    checkpoints.map((checkpoint) => {
      const result = insertCheckpoint(connection, checkpoint, maxCheckpointBytes);
      inserted(result);
      return result.stored;
    }),
  );
}

/**
 * Stores consecutive checkpoints in one `BEGIN IMMEDIATE` transaction on `connection`, in order;
 * `inserted` is called inside it after each one (the next one continues it). A duplicate id, like
 * any failure, rolls the whole group back.
 */
export function insertGroupImmediately(
  connection: Connection,
  checkpoints: readonly CheckpointWrite[],
  maxCheckpointBytes: number,
  inserted: (result: InsertResult) => void,
): StoredCheckpoint[] {
  let transaction = groupInserts.get(connection);
  if (transaction === undefined) {
    transaction = groupTransaction(connection);
    groupInserts.set(connection, transaction);
  }
  return transaction.immediate(checkpoints, maxCheckpointBytes, inserted);
}

/**
 * Stores one checkpoint; runs inside the caller's `BEGIN IMMEDIATE` transaction. Returns what to
 * list, and the encoded head to diff the next write against. Throws
 * a `conflict` error ({@link isDuplicateCheckpoint}) when the id is taken (no lookup first: the primary key says so),
 * and a `conflict` error before storing anything when the write carries a lease its run no longer holds.
 */
function insertCheckpoint(
  connection: Connection,
  checkpoint: CheckpointWrite,
  maxCheckpointBytes: number,
): InsertResult {
  const { statements, location } = connection;
  const { metadata, document } = checkpoint;
  const dataVersion = statements.dataVersion.get() as number;
  if (checkpoint.lease !== undefined)
    checkWriteLease(connection, checkpoint.lease, metadata.lineageId, metadata.id, dataVersion);
  const last = connection.lastWrite;
  const continuesLast =
    last !== undefined && last.dataVersion === dataVersion && last.id === metadata.parentId;
  const parent: ParentRow | undefined = continuesLast
    ? { stream_id: last.streamId, event_count: last.eventCount, head: headColumns.get(last) ?? '' }
    : metadata.parentId === null
      ? undefined
      : (statements.parentOf.get(metadata.parentId) as ParentRow | undefined);
  const previous =
    parent === undefined ? undefined : previousHead(connection, metadata.parentId!, String(parent.head));
  const insertChunk = (body: string) => Number(statements.insertChunk.run(body).lastInsertRowid);
  // A value stored by the last writes of this connection is named again rather than stored again,
  // while nothing else has changed the database (see Connection.recentValues).
  // The same holds for the long strings of the stream's events (see event-references.ts).
  if (!continuesLast) {
    connection.forgetValues();
    connection.eventStrings.forget();
  }
  const values: [string, number][] = [];
  const storeChunk = (body: string) => {
    if (body.charCodeAt(0) !== 118 /* v */) return insertChunk(body);
    const known = connection.recentValues.get(body);
    if (known !== undefined) return known;
    const id = insertChunk(body);
    values.push([body, id]);
    return id;
  };
  // Long arrays in segments (schema version 5): one task changing does not rewrite the list of 500.
  const encoder = new TreeEncoder(component, storeChunk, undefined, { segmentArrays: true });
  const root = encoder.encodeRoot(
    { inputs: document.inputs, entities: document.entities },
    previous,
    checkpoint.settled,
  );
  const { node } = root;
  const {
    streamId,
    eventBytes,
    strings: eventStrings,
  } = placeEvents(
    statements,
    checkpoint,
    parent,
    connection.eventStrings,
    continuesLast ? { length: last.streamLength, bytes: last.streamBytes } : undefined,
  );

  const row = metadataColumnsOf(metadata, JSON.stringify(metadata.entities));
  const canonical = canonicalMetadataText(row);
  const metadataText = hasCanonicalShape(metadata) ? canonical : JSON.stringify(metadata);
  const sizeBytes = encodedDocumentSize(document, metadataText, node, eventBytes);
  // Long summaries go in a chunk, shared with the previous write of this connection when they are
  // the same (no other connection wrote since: that chunk is still there).
  let entities: LastWrite['entities'];
  if (row.entities.length >= ENTITIES_CHUNK_BYTES) {
    entities =
      continuesLast && last.entities?.text === row.entities
        ? last.entities
        : { text: row.entities, chunk: storeChunk(`e${row.entities}`) };
  }
  if (sizeBytes > maxCheckpointBytes) {
    throw sqliteError(
      'too_large',
      `checkpoint "${metadata.id}" is ${sizeBytes} bytes, over this provider's maxCheckpointBytes (${maxCheckpointBytes}); raise maxCheckpointBytes or store less per checkpoint`,
    );
  }
  // A head equal to its parent's (an event that changed no entity, such as a model call starting)
  // names the parent's root chunk; otherwise the root body is a chunk too (see the schema).
  const head =
    node === previous && parent !== undefined && namesChunk(String(parent.head))
      ? String(parent.head)
      : String(storeChunk(`n${root.body}`));
  try {
    statements.insertCheckpoint.run(
      row.id,
      row.created_at,
      row.lineage_id,
      row.parent_id,
      row.branch,
      row.trigger,
      entities === undefined ? row.entities : String(entities.chunk),
      row.event_count,
      sizeBytes,
      streamId,
      document.formatVersion,
      document.libraryVersion,
      head,
      canonical === metadataText ? null : metadataText,
    );
  } catch (error) {
    if (sqliteCode(error)?.startsWith('SQLITE_CONSTRAINT'))
      throw duplicateCheckpoint(connection, metadata.id);
    throw error;
  }
  const reference = `${location}#${metadata.id}`;
  const stored = writtenCheckpoint(metadata, reference, sizeBytes, canonical === metadataText);
  const lastWrite: LastWrite = {
    id: metadata.id,
    streamId,
    eventCount: metadata.eventCount,
    streamLength: metadata.eventCount,
    streamBytes: eventBytes,
    dataVersion,
    ...(entities === undefined ? {} : { entities }),
  };
  headColumns.set(lastWrite, head);
  return { stored, head: node, lastWrite, values, eventStrings };
}
