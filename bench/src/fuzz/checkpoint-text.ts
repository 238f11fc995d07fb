// Writing a mutated checkpoint back as text. Laid out the way runtime-state lays checkpoints out
// (envelope, then the metadata line, entities, one event per line), because JsonProvider's listing
// reads the first two lines on their own: a mutation must reach that reader too, not only the full
// parse. Placeholders stand for what JSON.stringify cannot write (a raw `__proto__` key, nesting
// deeper than its recursion allows) and are replaced in the text.
import { joinDocumentText } from '@crewline/runtime-state';

const standardKeys = [
  'format',
  'formatVersion',
  'libraryVersion',
  'metadata',
  'inputs',
  'entities',
  'events',
];

/** A value the text will hold in place of a placeholder string. */
export interface Placeholder {
  /** The placeholder as it is put into the document (a string value, or a key). */
  marker: string;
  /** The raw JSON text that replaces `"marker"` in the output. */
  replacement: string;
}

let counter = 0;

/** A new placeholder for `replacement` (a JSON value, or a quoted key). */
export function placeholder(replacement: string): Placeholder {
  counter += 1;
  return { marker: `FUZZ_PLACEHOLDER_${counter}_${Math.random().toString(36).slice(2)}`, replacement };
}

function hasStandardLayout(document: unknown): document is Record<string, unknown> {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return false;
  const record = document as Record<string, unknown>;
  const keys = Object.keys(record);
  return (
    keys.length === standardKeys.length &&
    keys.every((key, index) => key === standardKeys[index]) &&
    Array.isArray(record.entities) &&
    Array.isArray(record.events)
  );
}

/** The document as checkpoint text, with every placeholder replaced. */
export function checkpointText(document: unknown, placeholders: readonly Placeholder[] = []): string {
  let text: string;
  if (hasStandardLayout(document)) {
    text = joinDocumentText({
      header: `"format": ${JSON.stringify(document.format)}, "formatVersion": ${JSON.stringify(document.formatVersion)}, "libraryVersion": ${JSON.stringify(document.libraryVersion)},\n"metadata": ${JSON.stringify(document.metadata)}`,
      inputs: JSON.stringify(document.inputs),
      entities: (document.entities as unknown[]).map((entity) => JSON.stringify(entity, null, 2)),
      events: (document.events as unknown[]).map((event) => JSON.stringify(event)),
    });
  } else {
    text = `${JSON.stringify(document, null, 1)}\n`;
  }
  for (const { marker, replacement } of placeholders) text = text.replace(`"${marker}"`, () => replacement);
  return text;
}
