import {
  canonicalMetadataText,
  damagedCheckpoint,
  decodeHead,
  isDamagedData,
  storedDocumentText,
  utf8Length,
} from '@crewline/runtime-state/internal';
import type { Connection } from '../database/connection.js';
import { component, sqliteError } from '../errors.js';
import { readEvents } from '../layout/event-streams.js';
import { chunkLoader, headColumnBody } from '../layout/head-tree.js';
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
    const load = chunkLoader(statements);
    const head = decodeHead(component, headColumnBody(String(row.head), load), load);
    const text = storedDocumentText(
      component,
      {
        formatVersion: row.format_version,
        libraryVersion: row.library_version,
        metadataText: row.metadata_text ?? canonicalMetadataText(row),
      },
      head,
      readEvents(statements, row.stream_id, row.event_count),
    );
    const size = utf8Length(text);
    if (size > maxCheckpointBytes) throw tooLarge(size);
    return text;
  } catch (error) {
    if (!isDamagedData(error)) throw error;
    throw damagedCheckpoint(component, id, location, error);
  }
}
