import type { CheckpointWrite, StoredCheckpoint } from '@crewline/runtime-state';
import {
  canonicalMetadataText,
  checkCheckpointWrite,
  checkLeaseToken,
  type EncodedNode,
  encodedDocumentSize,
  foreignLease,
  hasCanonicalShape,
  headBody,
  type LeaseState,
  leaseLost,
  metadataColumnsOf,
  referencedChunks,
  rewrittenCheckpoint,
  seedHead,
  TreeEncoder,
  writtenCheckpoint,
} from '@crewline/runtime-state/internal';
import type pg from 'pg';
import { component, errorCode, postgresError, raised } from './errors.js';
import { damagedRow, type MetadataRow } from './metadata-row.js';
import { type SchemaHandle, statementName } from './schema-handle.js';

/**
 * Refuses a checkpoint whose names could escape their meaning, or whose shape is off, and a lease
 * token that is not one or that fences another run.
 */
export function checkWritable(checkpoint: CheckpointWrite): void {
  checkCheckpointWrite(component, checkpoint);
  const { metadata, lease } = checkpoint;
  if (lease !== undefined) {
    checkLeaseToken(component, lease);
    if (lease.lineageId !== metadata.lineageId) {
      throw foreignLease(component, metadata.id, metadata.lineageId, lease.lineageId);
    }
  }
}

/** Thrown by the chunk sink when the reserved block of ids is used up. */
class OutOfIds extends Error {}

/** A head encoded for one write: its tree, and the chunks it adds. */
interface EncodedHead {
  node: EncodedNode;
  root: number;
  ids: number[];
  bodies: string[];
  refs: string[];
  sizeBase: number;
  metadataText: string | null;
}

/** Encodes the head of `checkpoint` against `previous`, taking chunk ids from the handle's block. */
function encodeHead(
  handle: SchemaHandle,
  checkpoint: CheckpointWrite,
  previous: EncodedNode | undefined,
): EncodedHead {
  const { metadata, document } = checkpoint;
  const ids: number[] = [];
  const bodies: string[] = [];
  const refs: string[] = [];
  const store = (body: string): number => {
    const id = handle.takeId();
    if (id === undefined) throw new OutOfIds();
    ids.push(id);
    bodies.push(body);
    // The ids a node names, as offsets back from its own (short: children come just before it).
    refs.push(
      body.charAt(0) === 'n'
        ? referencedChunks(component, body.slice(1))
            .map((child) => id - child)
            .join(',')
        : '',
    );
    return id;
  };
  const encoder = new TreeEncoder(component, store);
  const { node, body } = encoder.encodeRoot(
    { inputs: document.inputs, entities: document.entities },
    previous,
    checkpoint.settled,
  );
  const root = store(`n${body}`);
  const canonical = canonicalMetadataText(metadataColumnsOf(metadata, JSON.stringify(metadata.entities)));
  const metadataText = hasCanonicalShape(metadata) ? canonical : JSON.stringify(metadata);
  // The document's size without its event lines; the write function adds those (it knows them).
  const sizeBase = encodedDocumentSize(document, metadataText, node, 0);
  return {
    node,
    root,
    ids,
    bodies,
    refs,
    sizeBase,
    metadataText: canonical === metadataText ? null : metadataText,
  };
}

/** The head tree of a stored checkpoint, rebuilt from the database; undefined when it cannot be. */
async function loadHead(
  client: pg.PoolClient,
  handle: SchemaHandle,
  id: string,
): Promise<EncodedNode | undefined> {
  const { rows } = await client.query<{ id: string; body: string }>({
    name: statementName(handle.sql.headTree),
    text: handle.sql.headTree,
    values: [id],
  });
  if (rows.length === 0) return undefined;
  const bodies = new Map<number, string>();
  for (const row of rows) bodies.set(Number(row.id), row.body);
  const head = await client.query<{ head: string }>(
    `SELECT head FROM ${handle.quoted}.checkpoints WHERE id = $1`,
    [id],
  );
  if (head.rows.length === 0) return undefined;
  const load = (chunkId: number) => {
    const body = bodies.get(chunkId);
    if (body === undefined) throw new Error(`chunk ${chunkId} is missing`);
    return body;
  };
  try {
    return seedHead(component, headBody(component, Number(head.rows[0]!.head), load), load);
  } catch {
    // A damaged parent only costs storage: the head is then written whole.
    return undefined;
  }
}

async function reserveBlocks(client: pg.PoolClient, handle: SchemaHandle, count: number): Promise<void> {
  const { rows } = await client.query<{ block: string }>(handle.sql.reserveBlocks, [count]);
  handle.addBlocks(rows.map((row) => Number(row.block)));
}

/** The stored row of `checkpoint`'s id; undefined when none is stored. */
async function storedRow(
  client: pg.PoolClient,
  handle: SchemaHandle,
  checkpoint: CheckpointWrite,
): Promise<MetadataRow | undefined> {
  const { rows } = await client.query<MetadataRow>(handle.sql.metadataById, [checkpoint.metadata.id]);
  return rows[0];
}

/**
 * A checkpoint written again (a retried write whose first attempt did commit, a fork's origin
 * stored again) is accepted when it is the same one as `row`, the one stored under its id; another
 * checkpoint under a stored id is a conflict.
 */
function existingCheckpoint(
  handle: SchemaHandle,
  checkpoint: CheckpointWrite,
  row: MetadataRow | undefined,
): StoredCheckpoint {
  return rewrittenCheckpoint(component, row, checkpoint.metadata, handle.location, damagedRow);
}

export function detailOf(error: unknown): string {
  const detail = (error as { detail?: unknown }).detail;
  return typeof detail === 'string' ? detail : '';
}

/**
 * Encodes the head of `checkpoint` against `previous`, reserving more blocks of chunk ids when the
 * handle's are used up (twice as many each time).
 */
export async function encodeWithIds(
  client: pg.PoolClient,
  handle: SchemaHandle,
  checkpoint: CheckpointWrite,
  previous: EncodedNode | undefined,
): Promise<EncodedHead> {
  for (let blocks = 1; ; blocks *= 2) {
    try {
      return encodeHead(handle, checkpoint, previous);
    } catch (error) {
      if (!(error instanceof OutOfIds)) throw error;
      await reserveBlocks(client, handle, blocks);
    }
  }
}

/** The head of `checkpoint`'s parent to encode against: remembered, else rebuilt from the database. */
export async function parentHead(
  client: pg.PoolClient,
  handle: SchemaHandle,
  checkpoint: CheckpointWrite,
): Promise<EncodedNode | undefined> {
  const parentId = checkpoint.metadata.parentId;
  if (parentId === null) return undefined;
  return handle.heads.get(parentId) ?? (await loadHead(client, handle, parentId));
}

/** The first event the write sends, assuming its parent holds `parentEventCount` of them. */
export function firstEventSent(checkpoint: CheckpointWrite): number {
  return checkpoint.metadata.parentId === null
    ? 0
    : Math.min(checkpoint.parentEventCount, checkpoint.document.events.length);
}

/** One prepared call of `crewline_write` (see schema.ts) for `checkpoint`. */
export function writeStatement(
  handle: SchemaHandle,
  checkpoint: CheckpointWrite,
  encoded: EncodedHead,
  hasParentHead: boolean,
  eventsFrom: number,
  maxCheckpointBytes: number,
): pg.QueryConfig {
  const { metadata, document } = checkpoint;
  const events: string[] = [];
  for (let index = eventsFrom; index < document.events.length; index += 1)
    events.push(checkpoint.eventText(index));
  return {
    name: statementName(handle.sql.write),
    text: handle.sql.write,
    values: [
      metadata.id,
      metadata.createdAt,
      metadata.lineageId,
      metadata.parentId,
      metadata.branch,
      metadata.trigger,
      JSON.stringify(metadata.entities),
      metadata.eventCount,
      document.formatVersion,
      document.libraryVersion,
      encoded.metadataText,
      encoded.root,
      encoded.ids,
      encoded.bodies,
      encoded.refs,
      hasParentHead,
      checkpoint.parentEventCount,
      eventsFrom,
      events,
      encoded.sizeBase,
      maxCheckpointBytes,
      checkpoint.lease?.owner ?? null,
    ],
  };
}

export function storedOf(
  handle: SchemaHandle,
  checkpoint: CheckpointWrite,
  rows: readonly { o_size: string }[],
): StoredCheckpoint {
  const { metadata } = checkpoint;
  const reference = `${handle.location}#${metadata.id}`;
  return writtenCheckpoint(metadata, reference, Number(rows[0]!.o_size), hasCanonicalShape(metadata));
}

/**
 * The error to report for a refusal of `crewline_write` that no other attempt can change (the lease
 * is lost, the checkpoint too large, its parent damaged); undefined for any other failure. `named`
 * names what was refused in the message (`checkpoint "…"`), `lineageId` the run it belongs to,
 * `notStored` what a lost lease kept out of storage.
 */
export function refusalOf(
  error: unknown,
  handle: SchemaHandle,
  lineageId: string,
  named: string,
  maxCheckpointBytes: number,
  notStored = `${named} was not stored`,
): Error | undefined {
  const code = errorCode(error);
  if (code === raised.leaseLost) {
    const state = JSON.parse(detailOf(error) || '{}') as LeaseState;
    return leaseLost(component, lineageId, state, notStored);
  }
  if (code === raised.tooLarge) {
    return postgresError(
      'too_large',
      `${named} is ${detailOf(error)} bytes, over this provider's maxCheckpointBytes (${maxCheckpointBytes}); raise maxCheckpointBytes or store less per checkpoint`,
    );
  }
  if (code === raised.damaged) {
    return postgresError(
      'corrupt_checkpoint',
      `the parent of ${named} in ${handle.location} is damaged (${(error as Error).message}); resume from another checkpoint`,
      { cause: error },
    );
  }
  return undefined;
}

/**
 * Stores one checkpoint: encodes what changed since its parent's head (kept in memory, or rebuilt from
 * the database), then makes the whole write one call of `crewline_write` — one round trip, one
 * transaction — which checks the lease, places the events and inserts chunks, events and the row.
 * The rare answers that need another attempt (a block of chunk ids used up, a parent that is gone, a
 * parent that shares fewer events than assumed) are handled here.
 */
export async function writeCheckpoint(
  client: pg.PoolClient,
  handle: SchemaHandle,
  checkpoint: CheckpointWrite,
  maxCheckpointBytes: number,
): Promise<StoredCheckpoint> {
  const { metadata } = checkpoint;
  if (checkpoint.mayBeStoredAlready) {
    // Probably stored already (a fork's origin stored again): looked up first, since the key would
    // find it only by failing the insert, an ERROR line in the server's log each time. Stored
    // between this look-up and the write (another process storing it too), it still meets the key.
    const row = await storedRow(client, handle, checkpoint);
    if (row !== undefined) return existingCheckpoint(handle, checkpoint, row);
  }
  const parentId = metadata.parentId;
  let previous = await parentHead(client, handle, checkpoint);
  let eventsFrom = firstEventSent(checkpoint);
  let encoded: EncodedHead | undefined;
  for (let attempt = 0; attempt < 4; attempt += 1) {
    encoded ??= await encodeWithIds(client, handle, checkpoint, previous);
    try {
      const { rows } = await client.query<{ o_stream: string; o_size: string }>(
        writeStatement(handle, checkpoint, encoded, previous !== undefined, eventsFrom, maxCheckpointBytes),
      );
      handle.heads.remember(metadata.id, encoded.node);
      return storedOf(handle, checkpoint, rows);
    } catch (error) {
      const code = errorCode(error);
      if (code === raised.needEvents) {
        eventsFrom = Number(detailOf(error));
        continue;
      }
      if (code === raised.parentMissing) {
        // The parent was deleted (and its chunks collected) since its head was read: write it whole.
        if (parentId !== null) handle.heads.forget(parentId);
        previous = undefined;
        encoded = undefined;
        eventsFrom = 0;
        continue;
      }
      const named = `checkpoint "${metadata.id}"`;
      const refusal = refusalOf(error, handle, metadata.lineageId, named, maxCheckpointBytes);
      if (refusal !== undefined) throw refusal;
      if (code === '23505')
        return existingCheckpoint(handle, checkpoint, await storedRow(client, handle, checkpoint));
      throw error;
    }
  }
  throw postgresError(
    'write_failed',
    `checkpoint "${metadata.id}" could not be placed in ${handle.location} after several attempts; try again`,
  );
}
