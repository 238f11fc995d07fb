import { CHECKPOINT_FORMAT, type CheckpointDocument } from '../document.js';
import { type EncodedNode, prettyBytes, utf8Length } from './chunk-tree/tree-node.js';

/**
 * The envelope line of a checkpoint's text, as `joinDocumentText` lays it out (the `header` of its
 * parts): what a provider that stores structure rebuilds the exact text from.
 */
export function documentHeader(formatVersion: number, libraryVersion: string, metadataText: string): string {
  return `"format": ${JSON.stringify(CHECKPOINT_FORMAT)}, "formatVersion": ${formatVersion}, "libraryVersion": ${JSON.stringify(libraryVersion)},\n"metadata": ${metadataText}`;
}

export interface DocumentSizeParts {
  headerBytes: number;
  inputsBytes: number;
  /** Pretty-printed size of each entity. */
  entityBytes: readonly number[];
  eventCount: number;
  /** Sum of the sizes of all event lines. */
  eventBytes: number;
}

/**
 * UTF-8 size of the text `joinDocumentText` would produce from these parts, computed without
 * building it: `{header,\n"inputs": I,\n"entities": [\nE1,\nE2\n],\n"events": [\nV1,\nV2\n]\n}\n`.
 */
export function documentSize(parts: DocumentSizeParts): number {
  const entityCount = parts.entityBytes.length;
  let entities = 2;
  if (entityCount > 0) {
    entities = 4 + 2 * (entityCount - 1);
    for (const bytes of parts.entityBytes) entities += bytes;
  }
  const events = parts.eventCount === 0 ? 2 : 4 + 2 * (parts.eventCount - 1) + parts.eventBytes;
  return 1 + parts.headerBytes + 12 + parts.inputsBytes + 14 + entities + 12 + events + 3;
}

function childNamed(node: EncodedNode, key: string): EncodedNode {
  return node.children![node.keys!.indexOf(key)]!;
}

/**
 * {@link documentSize} of a checkpoint being written, from its encoded head (the root node of
 * `{ inputs, entities }`), the metadata text it is stored with and the bytes of its event lines.
 */
export function encodedDocumentSize(
  document: CheckpointDocument,
  metadataText: string,
  head: EncodedNode,
  eventBytes: number,
): number {
  return documentSize({
    headerBytes: utf8Length(documentHeader(document.formatVersion, document.libraryVersion, metadataText)),
    inputsBytes: childNamed(head, 'inputs').bytes,
    entityBytes: childNamed(head, 'entities').children!.map(prettyBytes),
    eventCount: document.events.length,
    eventBytes,
  });
}
