import type { Key } from 'ink';
import type { KeyPress } from './state/key-press.js';

/**
 * What Ink reports for the bracketed-paste marks (ESC [200~ and ESC [201~, which the terminal puts
 * around a pasted text once the browser asks for them): an unnamed key whose input is the sequence
 * without its ESC.
 */
const pasteMarks = new Map<string, 'paste-start' | 'paste-end'>([
  ['[200~', 'paste-start'],
  ['[201~', 'paste-end'],
]);

/** What Ink reports for a key press, as the terminal-independent {@link KeyPress}. */
export function toKeyPress(input: string, key: Key): KeyPress {
  const pasteMark = pasteMarks.get(input);
  if (pasteMark !== undefined) return { input: '', name: pasteMark };
  const modifiers = { ctrl: key.ctrl, shift: key.shift };
  if (key.upArrow) return { input: '', name: 'up', ...modifiers };
  if (key.downArrow) return { input: '', name: 'down', ...modifiers };
  if (key.leftArrow) return { input: '', name: 'left', ...modifiers };
  if (key.rightArrow) return { input: '', name: 'right', ...modifiers };
  if (key.pageUp) return { input: '', name: 'pageup', ...modifiers };
  if (key.pageDown) return { input: '', name: 'pagedown', ...modifiers };
  if (key.home) return { input: '', name: 'home', ...modifiers };
  if (key.end) return { input: '', name: 'end', ...modifiers };
  if (key.return) return { input: '', name: 'return', ...modifiers };
  if (key.escape) return { input: '', name: 'escape', ...modifiers };
  if (key.tab) return { input: '', name: 'tab', ...modifiers };
  if (key.backspace) return { input: '', name: 'backspace', ...modifiers };
  if (key.delete) return { input: '', name: 'delete', ...modifiers };
  // Ctrl+J arrives as a bare line feed; in an editor it inserts a line break.
  if (input === '\n') return { input: '', name: 'newline' };
  return { input, ...modifiers };
}
