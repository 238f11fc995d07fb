import { CHECKPOINT_FORMAT } from './document.js';
import { stateError } from './errors.js';
import { findStoredValueProblem, throwStoredValueProblem } from './nesting-depth.js';

/** Largest checkpoint text the core will parse, unless told otherwise (128 MiB). */
export const DEFAULT_MAX_CHECKPOINT_BYTES = 128 * 1024 * 1024;

/**
 * The text layout of a checkpoint, written once: `joinDocumentText` lays a document out with these
 * pieces, `documentTextSize` counts them, and providers that store structure rebuild the exact
 * text through both. Human-readable JSON: the envelope and metadata on the first lines (so a listing
 * reads only the start of a file), entities pretty-printed, one event per line.
 */
const layout = {
  open: '{',
  inputs: ',\n"inputs": ',
  entities: ',\n"entities": ',
  events: ',\n"events": ',
  close: '\n}\n',
  /** A non-empty list: opened, one item per line, closed. */
  listOpen: '[\n',
  listSeparator: ',\n',
  listClose: '\n]',
  emptyList: '[]',
} as const;

/** Indentation of an entity in the text (`JSON.stringify(entity, null, ENTITY_INDENT)`). */
const ENTITY_INDENT = 2;

/**
 * The envelope and metadata line of a checkpoint's text (the `header` of {@link DocumentTextParts}),
 * from the metadata's JSON text.
 */
export function documentHeader(formatVersion: number, libraryVersion: string, metadataText: string): string {
  return `"format": ${JSON.stringify(CHECKPOINT_FORMAT)}, "formatVersion": ${formatVersion}, "libraryVersion": ${JSON.stringify(libraryVersion)},\n"metadata": ${metadataText}`;
}

/** An entity as the text holds it. */
export function entityText(entity: unknown): string {
  return JSON.stringify(entity, null, ENTITY_INDENT);
}

export interface DocumentTextParts {
  /** `format`, `formatVersion`, `libraryVersion` and `metadata`, already serialized ({@link documentHeader}). */
  header: string;
  inputs: string;
  /** Each entity's text ({@link entityText}). */
  entities: readonly string[];
  events: readonly string[];
}

function list(items: readonly string[]): string {
  return items.length === 0
    ? layout.emptyList
    : `${layout.listOpen}${items.join(layout.listSeparator)}${layout.listClose}`;
}

/**
 * The text before and after the event lines (joined by `,\n` between them) of a document with
 * `eventCount` events: what lets a writer put cached event lines in place without copying them.
 */
export function documentTextAround(
  parts: Omit<DocumentTextParts, 'events'>,
  eventCount: number,
): { before: string; separator: string; after: string } {
  const head = `${layout.open}${parts.header}${layout.inputs}${parts.inputs}${layout.entities}${list(parts.entities)}${layout.events}`;
  if (eventCount === 0)
    return { before: `${head}${layout.emptyList}${layout.close}`, separator: '', after: '' };
  return {
    before: `${head}${layout.listOpen}`,
    separator: layout.listSeparator,
    after: `${layout.listClose}${layout.close}`,
  };
}

/**
 * {@link documentTextAround} with each entity's text given as UTF-8 pieces (see `indentedJsonPieces`)
 * and the text before the event lines returned as pieces too: concatenated, exactly the UTF-8
 * encoding of `before`.
 */
export function documentPiecesAround(
  parts: Omit<DocumentTextParts, 'events' | 'entities'> & { entities: readonly (readonly Buffer[])[] },
  eventCount: number,
): { before: Buffer[]; separator: string; after: string } {
  const before: Buffer[] = [];
  let text = `${layout.open}${parts.header}${layout.inputs}${parts.inputs}${layout.entities}`;
  if (parts.entities.length === 0) text += layout.emptyList;
  else {
    text += layout.listOpen;
    for (const [index, pieces] of parts.entities.entries()) {
      if (index > 0) text += layout.listSeparator;
      before.push(Buffer.from(text, 'utf8'), ...pieces);
      text = '';
    }
    text += layout.listClose;
  }
  text += layout.events;
  if (eventCount === 0) {
    before.push(Buffer.from(`${text}${layout.emptyList}${layout.close}`, 'utf8'));
    return { before, separator: '', after: '' };
  }
  before.push(Buffer.from(`${text}${layout.listOpen}`, 'utf8'));
  return { before, separator: layout.listSeparator, after: `${layout.listClose}${layout.close}` };
}

/** Lays a checkpoint out as its text (see {@link layout}). */
export function joinDocumentText(parts: DocumentTextParts): string {
  const { before, separator, after } = documentTextAround(parts, parts.events.length);
  return `${before}${parts.events.join(separator)}${after}`;
}

export interface DocumentSizeParts {
  headerBytes: number;
  inputsBytes: number;
  /** Size of each entity's text. */
  entityBytes: readonly number[];
  eventCount: number;
  /** Sum of the sizes of all event lines. */
  eventBytes: number;
}

function listBytes(count: number, itemBytes: number): number {
  if (count === 0) return layout.emptyList.length;
  return (
    layout.listOpen.length + layout.listSeparator.length * (count - 1) + itemBytes + layout.listClose.length
  );
}

/** UTF-8 size of the text {@link joinDocumentText} would produce from these parts, without building it. */
export function documentTextSize(parts: DocumentSizeParts): number {
  let entityBytes = 0;
  for (const bytes of parts.entityBytes) entityBytes += bytes;
  // Every piece of the layout is ASCII: its length is its size.
  return (
    layout.open.length +
    parts.headerBytes +
    layout.inputs.length +
    parts.inputsBytes +
    layout.entities.length +
    listBytes(parts.entityBytes.length, entityBytes) +
    layout.events.length +
    listBytes(parts.eventCount, parts.eventBytes) +
    layout.close.length
  );
}

export interface ParseOptions {
  /** Refuse texts larger than this many bytes. Default {@link DEFAULT_MAX_CHECKPOINT_BYTES}. */
  maxBytes?: number;
  /** Where the text came from, for error messages. */
  origin?: string;
}

/**
 * Parses checkpoint text: refuses oversized input, truncated or malformed JSON, any raw `__proto__`
 * key (crewline itself never writes one; encoded values escape it) and nesting past
 * `MAX_NESTING_DEPTH`, with typed errors.
 */
export function parseDocumentText(text: string, options: ParseOptions = {}): unknown {
  const parsed = parseCheckpointJson(text, options);
  throwStoredValueProblem(
    parsed,
    findStoredValueProblem(parsed, { jsonValues: false }),
    options.origin ? ` (${options.origin})` : '',
  );
  return parsed;
}

/**
 * The first half of {@link parseDocumentText}: the size limit and `JSON.parse`, with typed errors,
 * but no walk of what it parsed — for a caller whose validation walks it next
 * (`readDocument` in `reference.ts`). Without a reviver (one costs a call per value, most of a
 * restore's parse), a `"__proto__"` key is an own property, never a prototype change; the walk refuses it.
 */
export function parseCheckpointJson(text: string, options: ParseOptions = {}): unknown {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_CHECKPOINT_BYTES;
  const origin = options.origin ? ` (${options.origin})` : '';
  // UTF-8 takes at most three bytes per UTF-16 unit: a text that short needs no count.
  const size = text.length * 3 <= maxBytes ? 0 : Buffer.byteLength(text, 'utf8');
  if (size > maxBytes) {
    throw stateError(
      'too_large',
      `checkpoint${origin} is ${size} bytes, over the ${maxBytes}-byte limit; raise maxCheckpointBytes if you trust it`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    const truncated = text.trimEnd().length === 0 || !text.trimEnd().endsWith('}');
    throw stateError(
      'corrupt_checkpoint',
      `checkpoint${origin} is not valid JSON${truncated ? ' (it looks truncated)' : ''}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
