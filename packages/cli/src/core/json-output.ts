/**
 * The version of the shape of every `--json` document the CLI prints. Scripts check it: a field is
 * only ever added within one version; a field renamed, removed or changed in meaning raises it.
 */
export const JSON_SCHEMA_VERSION = 1;

/** A `--json` document: `schemaVersion` first, then `body`, indented, ending in a newline. */
export function jsonDocument(body: Record<string, unknown>): string {
  return `${JSON.stringify({ schemaVersion: JSON_SCHEMA_VERSION, ...body }, null, 2)}\n`;
}
