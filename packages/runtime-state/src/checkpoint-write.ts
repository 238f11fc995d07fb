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
import type { EncodedValue } from './value-codec.js';
import { indentedJsonPieces, SettledTextCache } from './write/settled-text.js';

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
 * What one write computes on demand, once: the text forms of its document and the pieces of its
 * bytes. Module functions over it rather than closures made per write: a run on '*' builds one
 * write per event, and the helpers cost their creation every time, before V8 optimized anything.
 */
interface LazyForms {
  readonly parts: CheckpointWriteParts;
  readonly document: CheckpointDocument;
  readonly eventTexts: (string | undefined)[];
  readonly eventBytes: (Buffer | undefined)[];
  envelope: { header: string; inputs: string } | undefined;
  head: { header: string; inputs: string; entities: string[] } | undefined;
  fullText: string | undefined;
  fullBytes: Buffer | undefined;
  chunks: Buffer[] | undefined;
  headText: string | undefined;
}

function envelopeParts(forms: LazyForms): { header: string; inputs: string } {
  const { document } = forms;
  forms.envelope ??= {
    header: documentHeader(
      document.formatVersion,
      document.libraryVersion,
      JSON.stringify(document.metadata),
    ),
    inputs: JSON.stringify(document.inputs),
  };
  return forms.envelope;
}

function headParts(forms: LazyForms): { header: string; inputs: string; entities: string[] } {
  forms.head ??= { ...envelopeParts(forms), entities: forms.document.entities.map(entityText) };
  return forms.head;
}

function eventTextOf(forms: LazyForms, index: number): string {
  let text = forms.eventTexts[index];
  if (text === undefined) {
    const event = forms.parts.events[index];
    if (event === undefined) throw new RangeError(`event index ${index} out of range`);
    text = JSON.stringify(event);
    forms.eventTexts[index] = text;
  }
  return text;
}

/** Event `index` as UTF-8, followed by `separator` (the same for every list: see document-text.ts). */
function eventByteLine(forms: LazyForms, index: number, separator: string): Buffer {
  let bytes = forms.eventBytes[index];
  if (bytes === undefined) {
    bytes = Buffer.from(`${eventTextOf(forms, index)}${separator}`, 'utf8');
    forms.eventBytes[index] = bytes;
  }
  return bytes;
}

function byteChunksOf(forms: LazyForms): readonly Buffer[] {
  if (forms.fullBytes !== undefined) return [forms.fullBytes];
  if (forms.chunks !== undefined) return forms.chunks;
  const { parts } = forms;
  // The layout of text(), but each event line (with the separator after it) is encoded once per
  // run and handed out again, and so is the text of each settled part of an entity (a completed
  // task): a checkpoint costs the encoding of what changed since the last one, not of its history.
  const count = parts.events.length;
  const cache = parts.settledTexts ?? new SettledTextCache();
  const entities = forms.document.entities.map((entity) => indentedJsonPieces(entity, parts.settled, cache));
  const { before, separator, after } = documentPiecesAround({ ...envelopeParts(forms), entities }, count);
  const built: Buffer[] = [...before];
  for (let index = 0; index < count; index += 1) {
    const line = eventByteLine(forms, index, separator);
    // The last line has no separator after it: a view without it, not a copy.
    built.push(index < count - 1 ? line : line.subarray(0, line.length - separator.length));
  }
  built.push(Buffer.from(after, 'utf8'));
  forms.chunks = built;
  return built;
}

function textOf(forms: LazyForms): string {
  if (forms.fullText === undefined) {
    const events: string[] = [];
    for (let index = 0; index < forms.parts.events.length; index += 1) events.push(eventTextOf(forms, index));
    forms.fullText = joinDocumentText({ ...headParts(forms), events });
  }
  return forms.fullText;
}

function bytesOf(forms: LazyForms): Buffer {
  if (forms.fullBytes !== undefined) return forms.fullBytes;
  forms.fullBytes =
    forms.fullText !== undefined ? Buffer.from(forms.fullText, 'utf8') : Buffer.concat(byteChunksOf(forms));
  forms.chunks = undefined;
  return forms.fullBytes;
}

/**
 * Builds the object a provider receives. Text forms are computed lazily and once, so a provider
 * that stores structure (SQLite) never pays for the whole-document text, and event lines are
 * serialized once per run rather than once per checkpoint.
 */
export function createCheckpointWrite(parts: CheckpointWriteParts): CheckpointWrite {
  const document: CheckpointDocument = {
    format: CHECKPOINT_FORMAT,
    formatVersion: CHECKPOINT_FORMAT_VERSION,
    libraryVersion: parts.libraryVersion ?? LIBRARY_VERSION,
    metadata: parts.metadata,
    inputs: parts.inputs,
    entities: parts.entities,
    events: parts.events as EventRecord[],
  };
  const forms: LazyForms = {
    parts,
    document,
    eventTexts: parts.eventTexts ?? [],
    eventBytes: parts.eventBytes ?? [],
    envelope: undefined,
    head: undefined,
    fullText: undefined,
    fullBytes: undefined,
    chunks: undefined,
    headText: undefined,
  };
  const write: { -readonly [Key in keyof CheckpointWrite]: CheckpointWrite[Key] } = {
    metadata: parts.metadata,
    document,
    parentEventCount: Math.min(parts.parentEventCount, parts.events.length),
    eventText: (index) => eventTextOf(forms, index),
    text: () => textOf(forms),
    headText() {
      forms.headText ??= joinDocumentText({ ...headParts(forms), events: [] });
      return forms.headText;
    },
    byteChunks: () => byteChunksOf(forms),
    bytes: () => bytesOf(forms),
  };
  // Set when given rather than spread in: built once per checkpoint, before V8 optimizes it.
  if (parts.lease !== undefined) write.lease = parts.lease;
  if (parts.settled !== undefined) write.settled = parts.settled;
  return write;
}
