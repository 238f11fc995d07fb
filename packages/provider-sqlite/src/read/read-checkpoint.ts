import type { ParsedCheckpoint } from '@crewline/runtime-state';
import {
  canonicalMetadataText,
  damagedCheckpoint,
  decodeHead,
  isDamagedData,
  missingCheckpointMessage,
  type StoredEnvelope,
  storedDocument,
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

/** What a checkpoint's row, chunk tree and event streams hold, read and decoded. */
interface StoredParts {
  row: CheckpointRow;
  head: Record<string, unknown>;
  events: string[];
  /** Characters of chunk bodies, metadata and event lines read: a floor under the text's size. */
  readCharacters: number;
}

/**
 * Reads what {@link readCheckpointText} and {@link readCheckpointDocument} are made of, refusing a
 * checkpoint over `maxBytes` by its stored size before reading its tree; `finish` runs inside the same
 * damage handling (a damaged part is a `corrupt_checkpoint` naming the checkpoint).
 */
function readStoredParts<T>(
  connection: Connection,
  id: string,
  maxBytes: number,
  finish: (parts: StoredParts, tooLarge: (size: number) => Error) => T,
): T {
  const { statements, location } = connection;
  const row = statements.checkpointById.get(id) as CheckpointRow | undefined;
  if (row === undefined) {
    throw sqliteError('not_found', missingCheckpointMessage(id, location));
  }
  const tooLarge = (size: number, atLeast = false) =>
    sqliteError(
      'too_large',
      `checkpoint "${id}" in ${location} is ${atLeast ? 'at least ' : ''}${size} bytes, over the limit of ${maxBytes} bytes (this provider's maxCheckpointBytes, or the reader's); raise it if you trust it`,
    );
  if (row.size_bytes > maxBytes) throw tooLarge(row.size_bytes);
  try {
    const loadChunk = chunkLoader(statements);
    // A chunk the tree refers to more than once is read from the database once; every reference
    // still counts its characters against the limit as decoding it builds its value again, so a
    // damaged tree whose chunks refer to one chunk many times over, level after level, stops at the
    // limit instead of decoding an exponential number of nodes (a cycle meets the decoder's depth
    // check first: damaged data).
    const bodies = new Map<number, string>();
    let readCharacters = 0;
    const load = (chunk: number) => {
      let body = bodies.get(chunk);
      if (body === undefined) {
        body = loadChunk(chunk);
        bodies.set(chunk, body);
      }
      readCharacters += body.length;
      if (readCharacters > maxBytes) throw tooLarge(readCharacters, true);
      return body;
    };
    const head = decodeHead(component, headColumnBody(String(row.head), load), load);
    // The stored size counts every event line: lines resolving to more are damaged references.
    const storedSize = Number.isFinite(row.size_bytes) ? Math.min(row.size_bytes, maxBytes) : maxBytes;
    const events = readEvents(statements, row.stream_id, row.event_count, storedSize);
    for (const line of events) readCharacters += line.length;
    return finish({ row, head, events, readCharacters }, tooLarge);
  } catch (error) {
    if (!isDamagedData(error)) throw error;
    throw damagedCheckpoint(component, id, location, error);
  }
}

function envelopeOf(row: CheckpointRow): StoredEnvelope {
  return {
    formatVersion: row.format_version,
    libraryVersion: row.library_version,
    metadataText: row.metadata_text ?? canonicalMetadataText(row),
  };
}

/**
 * Rebuilds the exact text the checkpoint was written as (`CheckpointWrite.text()`), from its row,
 * its chunk tree and its event streams. Runs inside the caller's read transaction.
 */
export function readCheckpointText(connection: Connection, id: string, maxCheckpointBytes: number): string {
  return readStoredParts(connection, id, maxCheckpointBytes, ({ row, head, events }, tooLarge) => {
    const text = storedDocumentText(component, envelopeOf(row), head, events);
    const size = utf8Length(text);
    if (size > maxCheckpointBytes) throw tooLarge(size);
    return text;
  });
}

/**
 * What {@link readCheckpointText}'s text parses to, without laying the text out (the provider's
 * `readParsed`): the decoded chunk tree as it is, the event lines as stored (the core parses them when
 * something reads the events). The text's size is not counted, so what was read (chunk bodies and
 * event lines, which the text holds and more) is held to the limit besides the stored size. Runs
 * inside the caller's read transaction.
 */
export function readCheckpointDocument(
  connection: Connection,
  id: string,
  maxBytes: number,
): ParsedCheckpoint {
  return readStoredParts(connection, id, maxBytes, ({ row, head, events, readCharacters }, tooLarge) => {
    const envelope = envelopeOf(row);
    // Characters, not bytes: a floor under the UTF-8 size, counted without another pass.
    const read = readCharacters + envelope.metadataText.length;
    if (read > maxBytes) throw tooLarge(read);
    return storedDocument(component, envelope, head, events);
  });
}
