import {
  canonicalMetadataText,
  damagedCheckpoint,
  damagedData,
  decodeHead,
  headBody,
  isDamagedData,
  missingCheckpointMessage,
  storedDocumentText,
  utf8Length,
} from '@crewline/runtime-state/internal';
import type pg from 'pg';
import { component, postgresError } from './errors.js';
import { type SchemaHandle, statementName } from './schema-handle.js';

/** The checkpoint row as the read query returns it (a JSON array, see schema-handle.ts). */
type CheckpointRow = [
  id: string,
  createdAt: string,
  lineageId: string,
  parentId: string | null,
  branch: string,
  trigger: string,
  entities: string,
  eventCount: number,
  sizeBytes: number,
  formatVersion: number,
  libraryVersion: string,
  head: number,
  metadataText: string | null,
];

/**
 * Rebuilds the exact text the checkpoint was written as (`CheckpointWrite.text()`), from its row,
 * its chunk tree and its event streams, all fetched by one statement (one snapshot).
 */
export async function readCheckpointText(
  client: pg.PoolClient,
  handle: SchemaHandle,
  id: string,
  maxCheckpointBytes: number,
): Promise<string> {
  const { rows } = await client.query<[number, string, string]>({
    name: statementName(handle.sql.read),
    text: handle.sql.read,
    values: [id],
    rowMode: 'array',
  });
  const first = rows[0];
  if (first === undefined || first[0] !== 0) {
    throw postgresError('not_found', missingCheckpointMessage(id, handle.location));
  }
  const tooLarge = (size: number) =>
    postgresError(
      'too_large',
      `checkpoint "${id}" is ${size} bytes, over this provider's maxCheckpointBytes (${maxCheckpointBytes}); raise maxCheckpointBytes if you trust it`,
    );
  try {
    const row = JSON.parse(first[2]) as CheckpointRow;
    const [, createdAt, lineageId, parentId, branch, trigger, entitiesText, eventCount, sizeBytes] = row;
    if (sizeBytes > maxCheckpointBytes) throw tooLarge(sizeBytes);
    const chunks = new Map<number, string>();
    const events: string[] = [];
    for (let index = 1; index < rows.length; index += 1) {
      const [kind, key, body] = rows[index]!;
      if (kind === 1) chunks.set(Number(key), body);
      else events.push(body);
    }
    if (events.length !== eventCount) {
      throw damagedData(component, `its event streams hold ${events.length} of its ${eventCount} events`);
    }
    const load = (chunkId: number) => {
      const body = chunks.get(chunkId);
      if (body === undefined) throw damagedData(component, `chunk ${chunkId} is missing`);
      return body;
    };
    const head = decodeHead(component, headBody(component, row[11], load), load);
    const metadataText =
      row[12] ??
      canonicalMetadataText({
        id,
        created_at: createdAt,
        lineage_id: lineageId,
        parent_id: parentId,
        branch,
        trigger,
        entities: entitiesText,
        event_count: eventCount,
      });
    const text = storedDocumentText(
      component,
      { formatVersion: row[9], libraryVersion: row[10], metadataText },
      head,
      events,
    );
    const size = utf8Length(text);
    if (size > maxCheckpointBytes) throw tooLarge(size);
    return text;
  } catch (error) {
    if (!isDamagedData(error)) throw error;
    throw damagedCheckpoint(component, id, handle.location, error);
  }
}
