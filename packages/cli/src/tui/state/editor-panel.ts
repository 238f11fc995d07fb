import { printable } from '../../core/format.js';
import type { BrowserState } from './browser-state.js';
import { packWords, windowAround } from './line-fitting.js';
import { type Line, plain } from './panels.js';
import { graphemes, textColumns } from './terminal-columns.js';

// The editor panel: an output, an input, a fork's branch name or a paused flow's answer being typed.

/** A grapheme of the editor as drawn, and whether the cursor is on it. */
interface DrawnGrapheme {
  text: string;
  columns: number;
  cursor: boolean;
}

/**
 * The editor's text wrapped to `width` as wrapText wraps it (control characters escaped, whole
 * graphemes, line breaks kept, rows ending between words, only a word wider than the row cut), and
 * where its cursor is drawn: the row, the offset in it and the text of the grapheme under the cursor
 * (one the cursor is inside of too), a space on a line break or after the end. Both come from one
 * walk over the whole text: wrapping the text up to the cursor apart broke a grapheme there (❤
 * without its selector is one column, ❤️ two) and put the cursor on another row than its character.
 * The space a row ends at stays on it, unlike wrapText's: the cursor can be on it.
 */
function editorRows(
  text: string,
  cursor: number,
  width: number,
): { rows: string[]; cursor: { row: number; start: number; text: string } } {
  const rows: DrawnGrapheme[][] = [];
  let line: DrawnGrapheme[] = [];
  let used = 0;
  let at = 0;
  let placed = false;
  const add = (shown: string, underCursor: boolean): void => {
    const columns = textColumns(shown);
    if (used + columns > width && line.length > 0) {
      // A space that does not fit after a word ending at the row's edge is not drawn, unless the
      // cursor is on it (then it starts the next row): it started the next row, which the word after
      // it then left holding only that space (task h8 #4).
      if (shown === ' ' && !underCursor) {
        rows.push(line);
        line = [];
        used = 0;
        return;
      }
      // The word being typed goes on the next row with what of it is on this one (task h2 #4: words
      // were cut where the row ended); a space under the cursor that does not fit starts the next row.
      const space = shown === ' ' ? -1 : line.findLastIndex((part) => part.text === ' ');
      rows.push(space >= 0 ? line.slice(0, space + 1) : line);
      line = space >= 0 ? line.slice(space + 1) : [];
      used = line.reduce((sum, part) => sum + part.columns, 0);
    }
    placed ||= underCursor;
    line.push({ text: shown, columns, cursor: underCursor });
    used += columns;
  };
  for (const grapheme of graphemes(text)) {
    const size = Array.from(grapheme).length;
    const underCursor = !placed && cursor < at + size;
    if (grapheme === '\n') {
      if (underCursor) add(' ', true);
      rows.push(line);
      line = [];
      used = 0;
    } else {
      add(printable(grapheme, false), underCursor);
    }
    at += size;
  }
  if (!placed) add(' ', true);
  rows.push(line);
  const row = rows.findIndex((parts) => parts.some((part) => part.cursor));
  const index = rows[row]!.findIndex((part) => part.cursor);
  const before = rows[row]!.slice(0, index);
  return {
    rows: rows.map((parts) => parts.map((part) => part.text).join('')),
    cursor: {
      row,
      start: before.reduce((length, part) => length + part.text.length, 0),
      text: rows[row]![index]!.text,
    },
  };
}

/**
 * What Enter does in the editor or confirmation open, in the words the editor's header and the key
 * line both use (they said "enter save" and "enter confirm" for the same key).
 */
export function enterWord(state: BrowserState): string {
  const kind = state.editor?.target.kind;
  if (kind === 'branch') return 'fork';
  if (kind === 'answer') return 'answer and continue';
  if (kind !== undefined) return 'save';
  return state.confirm?.mode ?? 'confirm';
}

export function editorPanel(state: BrowserState, width: number, height: number): Line[] {
  const editor = state.editor!;
  const target = editor.target;
  const title =
    target.kind === 'output'
      ? `Edit output of task ${target.index + 1}`
      : target.kind === 'input'
        ? `Edit input ${target.key}`
        : target.kind === 'answer'
          ? `Answer: ${state.run?.result?.pause?.message ?? ''}`
          : // At 80 columns the detail panel is 43 wide: "name the new branch (empty = generated)" was cut.
            'Fork: new branch name (empty = generated)';
  const { rows, cursor } = editorRows(editor.buffer.text, editor.buffer.cursor, width);
  // The cursor is drawn as an inverse character so it shows without colour support.
  const body: Line[] = rows.map((text, row) =>
    row !== cursor.row
      ? plain(text)
      : [
          { text: text.slice(0, cursor.start) },
          { text: cursor.text, inverse: true },
          { text: text.slice(cursor.start + cursor.text.length) },
        ],
  );
  const keys = [`enter ${enterWord(state)}`, 'esc cancel'];
  if (target.kind !== 'branch') keys.push('ctrl+j new line', 'ctrl+u clear to start', 'ctrl+k clear to end');
  // On as many lines as the width needs (two in the 43 columns of the detail panel at 80): the help
  // is out of reach in an editor, where `?` is text.
  const hint = packWords(keys, width).map((text): Line => [{ text, color: 'gray' }]);
  const visible = windowAround(body, cursor.row, Math.max(1, height - 2 - hint.length)).rows;
  return [[{ text: title, bold: true }], ...hint, plain(''), ...visible];
}
