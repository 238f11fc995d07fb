import type { EventRecord } from '@crewline/events';
import {
  CHECKPOINT_FORMAT,
  CHECKPOINT_FORMAT_VERSION,
  type CheckpointDocument,
  type CheckpointMetadata,
  type EntitySnapshot,
  LIBRARY_VERSION,
} from './document.js';
import { joinDocumentText } from './document-text.js';
import type { CheckpointWrite } from './provider.js';
import type { EncodedValue } from './value-codec.js';

export interface CheckpointWriteParts {
  metadata: CheckpointMetadata;
  inputs: EncodedValue;
  entities: EntitySnapshot[];
  events: readonly EventRecord[];
  parentEventCount: number;
  /** Cached text of each event; missing entries are serialized on demand and stored back. */
  eventTexts?: (string | undefined)[];
  libraryVersion?: string;
}

/**
 * Builds the object a provider receives. Text forms are computed lazily and once, so a provider
 * that stores structure (SQLite) never pays for the whole-document text, and event lines are
 * serialized once per run rather than once per checkpoint.
 */
export function createCheckpointWrite(parts: CheckpointWriteParts): CheckpointWrite {
  const eventTexts = parts.eventTexts ?? [];
  const document: CheckpointDocument = {
    format: CHECKPOINT_FORMAT,
    formatVersion: CHECKPOINT_FORMAT_VERSION,
    libraryVersion: parts.libraryVersion ?? LIBRARY_VERSION,
    metadata: parts.metadata,
    inputs: parts.inputs,
    entities: parts.entities,
    events: parts.events as EventRecord[],
  };
  let head: { header: string; inputs: string; entities: string[] } | undefined;
  const headParts = () => {
    head ??= {
      header: `"format": ${JSON.stringify(document.format)}, "formatVersion": ${document.formatVersion}, "libraryVersion": ${JSON.stringify(document.libraryVersion)},\n"metadata": ${JSON.stringify(document.metadata)}`,
      inputs: JSON.stringify(document.inputs),
      entities: document.entities.map((entity) => JSON.stringify(entity, null, 2)),
    };
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
  let fullText: string | undefined;
  let headText: string | undefined;
  return {
    metadata: parts.metadata,
    document,
    parentEventCount: Math.min(parts.parentEventCount, parts.events.length),
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
  };
}
