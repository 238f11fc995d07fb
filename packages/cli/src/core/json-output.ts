import { escapeControls } from './control-characters.js';

/**
 * The version of the shape of every `--json` document the CLI prints. Scripts check it: a field is
 * only ever added within one version; a field renamed, removed or changed in meaning raises it.
 */
export const JSON_SCHEMA_VERSION = 1;

/**
 * A `--json` document: `schemaVersion` first, then `body`, indented, ending in a newline. JSON
 * already escapes C0 controls inside strings; DEL and C1 controls (U+007F-U+009F, which a terminal
 * may act on) are escaped the JSON way too (`\u009b`), so the document parses to the same values.
 * The same characters as {@link printable} in `format.ts`, through the one loop of control-characters.ts.
 */
export function jsonDocument(body: Record<string, unknown>): string {
  return `${escapeControls(JSON.stringify({ schemaVersion: JSON_SCHEMA_VERSION, ...body }, null, 2), jsonEscape, true)}\n`;
}

/**
 * One line of a stream of JSON documents (`crewline worker --json` prints one per event): the same
 * document as `jsonDocument`, `schemaVersion` first, on a single line so a reader can split on newlines.
 */
export function jsonLine(body: Record<string, unknown>): string {
  return `${escapeControls(JSON.stringify({ schemaVersion: JSON_SCHEMA_VERSION, ...body }), jsonEscape, true)}\n`;
}

/** A control character the JSON way (`\u009b`), so the document parses to the same values. */
function jsonEscape(code: number): string {
  return `\\u${code.toString(16).padStart(4, '0')}`;
}
