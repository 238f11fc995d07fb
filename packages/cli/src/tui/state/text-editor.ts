import type { KeyPress } from './key-press.js';
import { graphemes } from './terminal-columns.js';

/**
 * An edit buffer with a cursor (an index into the buffer's code points). Keys move it and delete by
 * whole graphemes (an emoji sequence, a flag, a letter with its accent), so it stays between them.
 */
export interface TextBuffer {
  text: string;
  cursor: number;
}

export type EditorOutcome =
  | { type: 'edit'; buffer: TextBuffer }
  /** Enter: `buffer` is what to save (the text typed in the same read as the Enter inserted). */
  | { type: 'save'; buffer: TextBuffer }
  | { type: 'cancel' }
  | { type: 'ignored' };

/** A buffer holding `text` with the cursor at its end. */
export function textBuffer(text: string): TextBuffer {
  return { text, cursor: Array.from(text).length };
}

function splice(buffer: TextBuffer, start: number, end: number, insert: string): TextBuffer {
  const characters = Array.from(buffer.text);
  const inserted = Array.from(insert);
  characters.splice(start, end - start, ...inserted);
  return { text: characters.join(''), cursor: start + inserted.length };
}

/** The code-point indexes between the graphemes of `text`: 0, each grapheme's end. */
function graphemeStops(text: string): number[] {
  const stops = [0];
  let at = 0;
  for (const grapheme of graphemes(text)) {
    at += Array.from(grapheme).length;
    stops.push(at);
  }
  return stops;
}

/** The stop before `cursor` (0 at the start): where ← goes, and what Backspace deletes from. */
function previousStop(text: string, cursor: number): number {
  return graphemeStops(text).findLast((stop) => stop < cursor) ?? 0;
}

/** The stop after `cursor` (the end at the end): where → goes. */
function nextStop(text: string, cursor: number, length: number): number {
  return graphemeStops(text).find((stop) => stop > cursor) ?? length;
}

/**
 * What a key does in a text editor: Enter saves (also a carriage return that ends a read of one
 * line of typed text, see below), Esc cancels, Ctrl+J inserts a line break,
 * Backspace/Delete remove the grapheme before the cursor (terminals disagree on which one they
 * send), arrows/Home/End/Ctrl+A/Ctrl+E move, Ctrl+U clears to the start, Ctrl+K to the end.
 */
export function editText(buffer: TextBuffer, press: KeyPress): EditorOutcome {
  const length = Array.from(buffer.text).length;
  switch (press.name) {
    case 'return':
      return { type: 'save', buffer };
    case 'escape':
      return { type: 'cancel' };
    case 'newline':
      return { type: 'edit', buffer: splice(buffer, buffer.cursor, buffer.cursor, '\n') };
    case 'backspace':
    case 'delete':
      return buffer.cursor === 0
        ? { type: 'ignored' }
        : {
            type: 'edit',
            buffer: splice(buffer, previousStop(buffer.text, buffer.cursor), buffer.cursor, ''),
          };
    case 'left':
      return { type: 'edit', buffer: { ...buffer, cursor: previousStop(buffer.text, buffer.cursor) } };
    case 'right':
      return { type: 'edit', buffer: { ...buffer, cursor: nextStop(buffer.text, buffer.cursor, length) } };
    case 'home':
      return { type: 'edit', buffer: { ...buffer, cursor: 0 } };
    case 'end':
      return { type: 'edit', buffer: { ...buffer, cursor: length } };
    case undefined:
      break;
    default:
      return { type: 'ignored' };
  }
  if (press.ctrl) {
    if (press.input === 'a') return { type: 'edit', buffer: { ...buffer, cursor: 0 } };
    if (press.input === 'e') return { type: 'edit', buffer: { ...buffer, cursor: length } };
    if (press.input === 'u') return { type: 'edit', buffer: splice(buffer, 0, buffer.cursor, '') };
    if (press.input === 'k') return { type: 'edit', buffer: splice(buffer, buffer.cursor, length, '') };
    return { type: 'ignored' };
  }
  if (press.input === '') return { type: 'ignored' };
  // Carriage returns alone read together: Enter pressed twice quickly, saved once (no line break added).
  if (/^\r+$/.test(press.input)) return { type: 'save', buffer };
  // Enter typed right after text can arrive in the same read (a fast typist, a slow link, a script
  // driving the terminal), which Ink does not report as Enter (only a read that is exactly \r): a
  // carriage return that ends a read of ONE line is Enter, after the text before it. A read with a
  // line break before its end is pasted text, kept whole, its last line break included: a paste
  // arrives in reads of at most 4095 bytes (fewer over SSH) cut anywhere, so one of them ending on a
  // line break is no Enter. A terminal with bracketed paste marks a paste (see pasteText); this
  // guesses for the ones without it.
  const enter = press.input.endsWith('\r') && !/[\r\n]/.test(press.input.slice(0, -1));
  const edited = insertText(buffer, enter ? press.input.slice(0, -1) : press.input);
  return enter ? { type: 'save', buffer: edited } : { type: 'edit', buffer: edited };
}

/** A control character that is no text (a tab and a line break are). */
function isControl(character: string): boolean {
  const code = character.codePointAt(0)!;
  return (code < 0x20 && character !== '\t' && character !== '\n') || (code >= 0x7f && code <= 0x9f);
}

/**
 * Inserts `text` at the cursor, its carriage returns (how terminals send line breaks) as line breaks.
 * Keys read together with the text are in it: a Backspace (DEL, or ^H on some terminals) deletes the
 * grapheme before the cursor, as the key read alone does (a held Backspace over SSH arrives as
 * `\x7f\x7f\x7f`, which was inserted as raw DEL characters, invisible, into the text saved); other
 * control characters are dropped for the same reason.
 */
export function insertText(buffer: TextBuffer, text: string): TextBuffer {
  let edited = buffer;
  let pending = '';
  const flush = () => {
    if (pending !== '') edited = splice(edited, edited.cursor, edited.cursor, pending);
    pending = '';
  };
  for (const character of text.replace(/\r\n?/g, '\n')) {
    if (character === '\x7f' || character === '\b') {
      flush();
      if (edited.cursor > 0)
        edited = splice(edited, previousStop(edited.text, edited.cursor), edited.cursor, '');
    } else if (!isControl(character)) pending += character;
  }
  flush();
  return edited;
}

/**
 * A key press between the bracketed-paste marks, in an editor: all of it is text (a carriage return
 * or Ctrl+J a line break, a tab a tab), never Enter, Esc or a move.
 */
export function pasteText(buffer: TextBuffer, press: KeyPress): TextBuffer {
  if (press.name === 'return' || press.name === 'newline') return insertText(buffer, '\n');
  if (press.name === 'tab') return insertText(buffer, '\t');
  if (press.name !== undefined || press.ctrl) return buffer;
  return insertText(buffer, press.input);
}
