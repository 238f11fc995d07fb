import type { CheckpointDocument, LoadedCheckpoint } from '@crewline/runtime-state';

/**
 * A checkpoint as a restore read it whose document was edited before the restore (task outputs
 * replaced: `continueFromCheckpoint`'s `taskOutputs`, the CLI's `--set-output`). The mark travels
 * with the object, as `headWhenRead` does (a copy made with a spread keeps it).
 */
interface EditedCheckpoint extends LoadedCheckpoint {
  /**
   * The document as stored. A fork stores its origin again beside its first write in each location
   * (runtime-state's ForkOrigin): that must be this one. The edited document stored under the
   * origin's id would say the run had produced the edit, where the location did not hold it yet (a
   * file copied out of its location), and a provider that refuses another document under an id it
   * holds would refuse it.
   */
  storedDocument?: CheckpointDocument;
}

/** `loaded` with `document` in the place of its own; the document as stored stays known. */
export function withEditedDocument<T extends LoadedCheckpoint>(loaded: T, document: CheckpointDocument): T {
  return { ...loaded, document, storedDocument: storedDocumentOf(loaded) } satisfies EditedCheckpoint;
}

/** The document of `loaded` as stored: its own unless it was edited ({@link withEditedDocument}). */
export function storedDocumentOf(loaded: LoadedCheckpoint): CheckpointDocument {
  return (loaded as EditedCheckpoint).storedDocument ?? loaded.document;
}
