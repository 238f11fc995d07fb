/**
 * Named keys the browser reacts to. `newline` is Ctrl+J / a pasted line feed (a line break in an
 * editor). `paste-start` and `paste-end` are the terminal's bracketed-paste marks around a pasted text
 * (the browser asks for them): everything between them is text, never keys.
 */
export type KeyName =
  | 'up'
  | 'down'
  | 'left'
  | 'right'
  | 'pageup'
  | 'pagedown'
  | 'home'
  | 'end'
  | 'return'
  | 'newline'
  | 'escape'
  | 'tab'
  | 'backspace'
  | 'delete'
  | 'paste-start'
  | 'paste-end';

/** Rows a page up/down moves, in the tree and in the detail panel. */
export const PAGE_ROWS = 10;

/** One key press, independent of the terminal library (what Ink reports is mapped to this). */
export interface KeyPress {
  /** The text typed (a character, or several when pasted); empty for named keys. */
  input: string;
  name?: KeyName;
  ctrl?: boolean;
  shift?: boolean;
}

/** A key press from a character or name, for tests and the Ink adapter. */
export function key(input: string | KeyName, modifiers: { ctrl?: boolean; shift?: boolean } = {}): KeyPress {
  const names: readonly string[] = [
    'up',
    'down',
    'left',
    'right',
    'pageup',
    'pagedown',
    'home',
    'end',
    'return',
    'newline',
    'escape',
    'tab',
    'backspace',
    'delete',
    'paste-start',
    'paste-end',
  ];
  if (input.length > 1 && names.includes(input)) return { input: '', name: input as KeyName, ...modifiers };
  return { input, ...modifiers };
}
