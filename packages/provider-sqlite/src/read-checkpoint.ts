import { joinDocumentText } from '@crewline/runtime-state';
import {
  canonicalMetadataText,
  damagedCheckpoint,
  damagedData,
  decodeHead,
  documentHeader,
  isDamagedData,
  utf8Length,
} from '@crewline/runtime-state/internal';
import type { Connection } from './connection.js';
import { component, sqliteError } from './errors.js';
import { readEvents } from './event-streams.js';
import { headColumnBody } from './head-column.js';
import type { MetadataRow } from './metadata-row.js';

interface CheckpointRow extends MetadataRow {
  stream_id: number;
  format_version: number;
  library_version: string;
  head: string;
  metadata_text: string | null;
}

/**
 * Rebuilds the exact text the checkpoint was written as (`CheckpointWrite.text()`), from its row,
 * its chunk tree and its event streams. Runs inside the caller's read transaction.
 */
export function readCheckpointText(connection: Connection, id: string, maxCheckpointBytes: number): string {
  const { statements, location } = connection;
  const row = statements.checkpointById.get(id) as CheckpointRow | undefined;
  if (row === undefined) {
    throw sqliteError(
      'not_found',
      `no checkpoint "${id}" in ${location}; run \`crewline checkpoint list\` to see ids`,
    );
  }
  const tooLarge = (size: number) =>
    sqliteError(
      'too_large',
      `checkpoint "${id}" is ${size} bytes, over this provider's maxCheckpointBytes (${maxCheckpointBytes}); raise maxCheckpointBytes if you trust it`,
    );
  if (row.size_bytes > maxCheckpointBytes) throw tooLarge(row.size_bytes);
  try {
    const load = (chunkId: number) => {
      const body = statements.chunkBody.get(chunkId);
      if (typeof body !== 'string') throw damagedData(component, `chunk ${chunkId} is missing`);
      return body;
    };
    const head = decodeHead(component, headColumnBody(String(row.head), load), load);
    const entities = head.entities;
    if (!Array.isArray(entities) || head.inputs === null || typeof head.inputs !== 'object') {
      throw damagedData(component, 'the checkpoint head has no inputs or entities');
    }
    const text = joinDocumentText({
      header: documentHeader(
        row.format_version,
        row.library_version,
        row.metadata_text ?? canonicalMetadataText(row),
      ),
      inputs: JSON.stringify(head.inputs),
      entities: entities.map((entity) => JSON.stringify(entity, null, 2)),
      events: readEvents(statements, row.stream_id, row.event_count),
    });
    const size = utf8Length(text);
    if (size > maxCheckpointBytes) throw tooLarge(size);
    return text;
  } catch (error) {
    if (!isDamagedData(error)) throw error;
    throw damagedCheckpoint(component, id, location, error);
  }
}
