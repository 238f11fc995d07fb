import type { EventRecord } from '@crewline/events';
import {
  CHECKPOINT_FORMAT,
  CHECKPOINT_FORMAT_VERSION,
  type CheckpointDocument,
  type CheckpointMetadata,
  type EntitySnapshot,
  LIBRARY_VERSION,
} from './document.js';
import { documentHeader, documentPiecesAround, entityText, joinDocumentText } from './document-text.js';
import type { CheckpointWrite, LeaseToken, SettledParts } from './provider.js';
import { indentedJsonPieces, SettledTextCache } from './settled-text.js';
import type { EncodedValue } from './value-codec.js';

export interface CheckpointWriteParts {
  metadata: CheckpointMetadata;
  inputs: EncodedValue;
  entities: EntitySnapshot[];
  events: readonly EventRecord[];
  parentEventCount: number;
  /** Cached text of each event; missing entries are serialized on demand and stored back. */
  eventTexts?: (string | undefined)[];
  /**
   * Cached UTF-8 bytes of each event line followed by the separator of the event list; missing
   * entries are encoded on demand and stored back.
   */
  eventBytes?: (Buffer | undefined)[];
  libraryVersion?: string;
  /** The lease the run writes under (providers with `capabilities.leases` check it). */
  lease?: LeaseToken;
  /** The run's settled objects (see `CheckpointWrite.settled`). */
  settled?: SettledParts;
  /** The run's cache of the text of settled entity parts, for `byteChunks()`. */
  settledTexts?: SettledTextCache;
}

/**
 * Builds the object a provider receives. Text forms are computed lazily and once, so a provider
 * that stores structure (SQLite) never pays for the whole-document text, and event lines are
 * serialized once per run rather than once per checkpoint.
 */
export function createCheckpointWrite(parts: CheckpointWriteParts): CheckpointWrite {
  const eventTexts = parts.eventTexts ?? [];
  const eventBytes = parts.eventBytes ?? [];
  const document: CheckpointDocument = {
    format: CHECKPOINT_FORMAT,
    formatVersion: CHECKPOINT_FORMAT_VERSION,
    libraryVersion: parts.libraryVersion ?? LIBRARY_VERSION,
    metadata: parts.metadata,
    inputs: parts.inputs,
    entities: parts.entities,
    events: parts.events as EventRecord[],
  };
  let envelope: { header: string; inputs: string } | undefined;
  const envelopeParts = () => {
    envelope ??= {
      header: documentHeader(
        document.formatVersion,
        document.libraryVersion,
        JSON.stringify(document.metadata),
      ),
      inputs: JSON.stringify(document.inputs),
    };
    return envelope;
  };
  let head: { header: string; inputs: string; entities: string[] } | undefined;
  const headParts = () => {
    head ??= { ...envelopeParts(), entities: document.entities.map(entityText) };
    return head;
  };
  const eventText = (index: number): string => {
    let text = eventTexts[index];
    if (text === undefined) {
      const event = parts.events[index];
      if (event === undefined) throw new RangeError(`event index ${index} out of range`);
      text = JSON.stringify(event);
      eventTexts[index] = text;
    }
    return text;
  };
  /** Event `index` as UTF-8, followed by `separator` (the same for every list: see document-text.ts). */
  const eventByteLine = (index: number, separator: string): Buffer => {
    let bytes = eventBytes[index];
    if (bytes === undefined) {
      bytes = Buffer.from(`${eventText(index)}${separator}`, 'utf8');
      eventBytes[index] = bytes;
    }
    return bytes;
  };
  let fullText: string | undefined;
  let fullBytes: Buffer | undefined;
  let chunks: Buffer[] | undefined;
  let headText: string | undefined;
  const byteChunks = (): readonly Buffer[] => {
    if (fullBytes !== undefined) return [fullBytes];
    if (chunks !== undefined) return chunks;
    // The layout of text(), but each event line (with the separator after it) is encoded once per
    // run and handed out again, and so is the text of each settled part of an entity (a completed
    // task): a checkpoint costs the encoding of what changed since the last one, not of its history.
    const count = parts.events.length;
    const cache = parts.settledTexts ?? new SettledTextCache();
    const entities = document.entities.map((entity) => indentedJsonPieces(entity, parts.settled, cache));
    const { before, separator, after } = documentPiecesAround({ ...envelopeParts(), entities }, count);
    const built: Buffer[] = [...before];
    for (let index = 0; index < count; index += 1) {
      const line = eventByteLine(index, separator);
      // The last line has no separator after it: a view without it, not a copy.
      built.push(index < count - 1 ? line : line.subarray(0, line.length - separator.length));
    }
    built.push(Buffer.from(after, 'utf8'));
    chunks = built;
    return chunks;
  };
  return {
    metadata: parts.metadata,
    document,
    parentEventCount: Math.min(parts.parentEventCount, parts.events.length),
    ...(parts.lease === undefined ? {} : { lease: parts.lease }),
    ...(parts.settled === undefined ? {} : { settled: parts.settled }),
    eventText,
    text() {
      if (fullText === undefined) {
        const events: string[] = [];
        for (let index = 0; index < parts.events.length; index += 1) events.push(eventText(index));
        fullText = joinDocumentText({ ...headParts(), events });
      }
      return fullText;
    },
    headText() {
      headText ??= joinDocumentText({ ...headParts(), events: [] });
      return headText;
    },
    byteChunks,
    bytes() {
      if (fullBytes !== undefined) return fullBytes;
      fullBytes = fullText !== undefined ? Buffer.from(fullText, 'utf8') : Buffer.concat(byteChunks());
      chunks = undefined;
      return fullBytes;
    },
  };
}
