import type { KeyPress } from './key-press.js';

/** An edit buffer with a cursor (an index into the buffer's code points). */
export interface TextBuffer {
  text: string;
  cursor: number;
}

export type EditorOutcome =
  | { type: 'edit'; buffer: TextBuffer }
  | { type: 'save' }
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

/**
 * What a key does in a text editor: Enter saves, Esc cancels, Ctrl+J inserts a line break,
 * Backspace/Delete remove the character before the cursor (terminals disagree on which one they
 * send), arrows/Home/End/Ctrl+A/Ctrl+E move, Ctrl+U clears to the start, Ctrl+K to the end.
 */
export function editText(buffer: TextBuffer, press: KeyPress): EditorOutcome {
  const length = Array.from(buffer.text).length;
  switch (press.name) {
    case 'return':
      return { type: 'save' };
    case 'escape':
      return { type: 'cancel' };
    case 'newline':
      return { type: 'edit', buffer: splice(buffer, buffer.cursor, buffer.cursor, '\n') };
    case 'backspace':
    case 'delete':
      return buffer.cursor === 0
        ? { type: 'ignored' }
        : { type: 'edit', buffer: splice(buffer, buffer.cursor - 1, buffer.cursor, '') };
    case 'left':
      return { type: 'edit', buffer: { ...buffer, cursor: Math.max(0, buffer.cursor - 1) } };
    case 'right':
      return { type: 'edit', buffer: { ...buffer, cursor: Math.min(length, buffer.cursor + 1) } };
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
  // Pasted text arrives in one piece; terminals send line breaks as carriage returns.
  const text = press.input.replace(/\r\n?/g, '\n');
  return { type: 'edit', buffer: splice(buffer, buffer.cursor, buffer.cursor, text) };
}
