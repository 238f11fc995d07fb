import { CHECKPOINT_FORMAT, type CheckpointDocument } from '../document.js';
import { documentHeader, documentTextSize, entityText, joinDocumentText } from '../document-text.js';
import type { ParsedCheckpoint } from '../provider.js';
import { damagedData } from './chunk-tree/tree-decoder.js';
import { type EncodedNode, prettyBytes, utf8Length } from './chunk-tree/tree-node.js';

function childNamed(node: EncodedNode, key: string): EncodedNode {
  return node.children![node.keys!.indexOf(key)]!;
}

/**
 * The size of a checkpoint's text (`documentTextSize`) being written, from its encoded head (the
 * root node of `{ inputs, entities }`), the metadata text it is stored with and the bytes of its
 * event lines: a provider that stores structure knows it without building the text.
 */
export function encodedDocumentSize(
  document: CheckpointDocument,
  metadataText: string,
  head: EncodedNode,
  eventBytes: number,
): number {
  return documentTextSize({
    headerBytes: utf8Length(documentHeader(document.formatVersion, document.libraryVersion, metadataText)),
    inputsBytes: childNamed(head, 'inputs').bytes,
    entityBytes: childNamed(head, 'entities').children!.map(prettyBytes),
    eventCount: document.events.length,
    eventBytes,
  });
}

/** What a provider stored of a checkpoint besides its head and events, to rebuild its text from. */
export interface StoredEnvelope {
  formatVersion: number;
  libraryVersion: string;
  metadataText: string;
}

/**
 * The exact text a checkpoint was written as (`CheckpointWrite.text()`), from what a provider that
 * stores structure kept of it: its envelope, its decoded head and its event lines. A head without
 * inputs or entities is damaged data of `component`.
 */
export function storedDocumentText(
  component: string,
  envelope: StoredEnvelope,
  head: Record<string, unknown>,
  events: readonly string[],
): string {
  const { inputs, entities } = head;
  if (!Array.isArray(entities) || inputs === null || typeof inputs !== 'object') {
    throw damagedData(component, 'the checkpoint head has no inputs or entities');
  }
  return joinDocumentText({
    header: documentHeader(envelope.formatVersion, envelope.libraryVersion, envelope.metadataText),
    inputs: JSON.stringify(inputs),
    entities: entities.map(entityText),
    events,
  });
}

/**
 * What the text of {@link storedDocumentText} parses to, without building that text only for the core
 * to parse it again: what a provider that stores structure returns from `readParsed`. The event lines
 * are handed over unparsed (the core parses them when something reads them). A head without inputs
 * or entities, or metadata that is not JSON, is damaged data of `component`.
 */
export function storedDocument(
  component: string,
  envelope: StoredEnvelope,
  head: Record<string, unknown>,
  events: readonly string[],
): ParsedCheckpoint {
  const { inputs, entities } = head;
  if (!Array.isArray(entities) || inputs === null || typeof inputs !== 'object') {
    throw damagedData(component, 'the checkpoint head has no inputs or entities');
  }
  let metadata: unknown;
  try {
    metadata = JSON.parse(envelope.metadataText);
  } catch {
    throw damagedData(component, 'the checkpoint metadata is not valid JSON');
  }
  // The keys in the order of the text.
  return {
    document: {
      format: CHECKPOINT_FORMAT,
      formatVersion: envelope.formatVersion,
      libraryVersion: envelope.libraryVersion,
      metadata,
      inputs,
      entities,
    },
    eventLines: events,
  };
}
