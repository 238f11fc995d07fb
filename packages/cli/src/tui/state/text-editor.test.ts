import { describe, expect, it } from 'vitest';
import { key } from './key-press.js';
import { editText, pasteText, type TextBuffer, textBuffer } from './text-editor.js';

function apply(buffer: TextBuffer, ...presses: Parameters<typeof key>[0][]): TextBuffer {
  let current = buffer;
  for (const press of presses) {
    const outcome = editText(current, key(press));
    if (outcome.type === 'edit') current = outcome.buffer;
  }
  return current;
}

describe('text editor', () => {
  it('types at the cursor, moves, deletes backwards with either key', () => {
    let buffer = apply(textBuffer('ac'), 'left', 'b');
    expect(buffer).toEqual({ text: 'abc', cursor: 2 });
    buffer = apply(buffer, 'backspace');
    expect(buffer).toEqual({ text: 'ac', cursor: 1 });
    buffer = apply(buffer, 'end', 'delete', 'home', 'delete');
    expect(buffer).toEqual({ text: 'a', cursor: 0 });
  });

  it('clears with ctrl+u and ctrl+k, jumps with ctrl+a and ctrl+e', () => {
    const start = textBuffer('hello world');
    const moved = editText(start, key('a', { ctrl: true }));
    expect(moved).toEqual({ type: 'edit', buffer: { text: 'hello world', cursor: 0 } });
    const killed = editText({ text: 'hello world', cursor: 5 }, key('k', { ctrl: true }));
    expect(killed).toEqual({ type: 'edit', buffer: { text: 'hello', cursor: 5 } });
    const cleared = editText({ text: 'hello world', cursor: 5 }, key('u', { ctrl: true }));
    expect(cleared).toEqual({ type: 'edit', buffer: { text: ' world', cursor: 0 } });
  });

  // A new-user trial (s11, finding 4): `xyz` and Enter read in one chunk (a fast typist, a slow
  // link, tmux send-keys) left the editor open with a line break: only a chunk that is exactly \r is
  // Enter to Ink.
  it('saves on a carriage return that ends a chunk of typed text, after inserting the text', () => {
    expect(editText(textBuffer('a'), { input: 'xyz\r' })).toEqual({
      type: 'save',
      buffer: { text: 'axyz', cursor: 4 },
    });
    // A pasted text with line breaks inside stays text.
    expect(editText(textBuffer(''), { input: 'one\rtwo' })).toEqual({
      type: 'edit',
      buffer: { text: 'one\ntwo', cursor: 7 },
    });
    expect(editText(textBuffer('kept'), key('return'))).toEqual({
      type: 'save',
      buffer: { text: 'kept', cursor: 4 },
    });
  });

  // Review r-tui finding 1: a paste arrives in reads of at most 4095 bytes (fewer over SSH), cut
  // anywhere; one of them ending on a line break saved part of the text and closed the editor, and
  // the next reads ran as browser keys. Only a read of one line ends in Enter.
  it('keeps a read of several lines that ends in a carriage return as text, its last line break included', () => {
    expect(editText(textBuffer(''), { input: 'one\rtwo\r' })).toEqual({
      type: 'edit',
      buffer: { text: 'one\ntwo\n', cursor: 8 },
    });
    expect(editText(textBuffer('a'), { input: 'one\ntwo\r' }).type).toBe('edit');
    expect(editText(textBuffer('a'), { input: 'one\r\r' }).type).toBe('edit');
  });

  // Review r-tui finding 4: Enter pressed twice, read together, saved the text with a line break added.
  it('saves on carriage returns alone read together, adding no line break', () => {
    expect(editText(textBuffer('kept'), { input: '\r\r' })).toEqual({
      type: 'save',
      buffer: { text: 'kept', cursor: 4 },
    });
  });

  it('takes everything between bracketed-paste marks as text: Enter a line break, a tab a tab', () => {
    let buffer = pasteText(textBuffer('a'), { input: 'b\rc\r' });
    expect(buffer).toEqual({ text: 'ab\nc\n', cursor: 5 });
    buffer = pasteText(buffer, key('return'));
    buffer = pasteText(buffer, key('tab'));
    buffer = pasteText(buffer, key('up'));
    expect(buffer).toEqual({ text: 'ab\nc\n\n\t', cursor: 7 });
  });

  it('inserts pasted text and line breaks, counting characters not UTF-16 units', () => {
    const pasted = editText(textBuffer('é'), { input: 'a\r\nb' });
    expect(pasted).toEqual({ type: 'edit', buffer: { text: 'éa\nb', cursor: 4 } });
    const broken = editText({ text: 'ab', cursor: 1 }, key('newline'));
    expect(broken).toEqual({ type: 'edit', buffer: { text: 'a\nb', cursor: 2 } });
    expect(apply(textBuffer('😀x'), 'left', 'backspace')).toEqual({ text: 'x', cursor: 0 });
  });

  it('saves on enter, cancels on escape, ignores other control keys', () => {
    expect(editText(textBuffer('x'), key('return')).type).toBe('save');
    expect(editText(textBuffer('x'), key('escape')).type).toBe('cancel');
    expect(editText(textBuffer('x'), key('up')).type).toBe('ignored');
    expect(editText(textBuffer('x'), key('z', { ctrl: true })).type).toBe('ignored');
    expect(editText(textBuffer(''), key('backspace')).type).toBe('ignored');
  });

  // The cursor was an index of code points: it took 5 presses of ← to cross a family emoji (three
  // people joined by two zero-width joiners), and Backspace left a broken sequence behind.
  // Task h8 #3 (review R3): a held Backspace over SSH arrives as `\x7f\x7f\x7f` in one read, which
  // was inserted as raw DEL characters (invisible) into the text saved.
  it('takes backspaces read together with text as backspaces, and drops other control characters', () => {
    expect(apply(textBuffer('abcdef'), '\x7f\x7f\x7f')).toEqual({ text: 'abc', cursor: 3 });
    expect(apply({ text: 'abcdef', cursor: 2 }, 'x\x7f\by')).toEqual({ text: 'aycdef', cursor: 2 });
    expect(apply(textBuffer('é👍🏽'), '\x7f\x7f\x7f')).toEqual({ text: '', cursor: 0 });
    expect(editText(textBuffer('a'), key('bc\x7f\x00\x1b\td\r'))).toEqual({
      type: 'save',
      buffer: { text: 'ab\td', cursor: 4 },
    });
    expect(pasteText(textBuffer('ab'), key('\x7fc\x07'))).toEqual({ text: 'ac', cursor: 2 });
  });

  it('moves over and deletes a whole grapheme: an emoji sequence, a flag, a letter with its accent', () => {
    const family = '👨‍👩‍👧';
    const text = `ab${family}cd🇫🇷e\u0301`;
    const length = Array.from(text).length;
    expect(apply(textBuffer(text), 'left')).toEqual({ text, cursor: length - 2 });
    expect(apply(textBuffer(text), 'left', 'left')).toEqual({ text, cursor: length - 4 });
    // From after "ab", one → crosses the family.
    expect(apply({ text, cursor: 2 }, 'right')).toEqual({ text, cursor: 7 });
    expect(apply({ text, cursor: 7 }, 'left')).toEqual({ text, cursor: 2 });
    expect(apply({ text, cursor: 7 }, 'backspace')).toEqual({ text: `abcd🇫🇷e\u0301`, cursor: 2 });
    expect(apply(textBuffer(text), 'backspace', 'backspace')).toEqual({ text: `ab${family}cd`, cursor: 9 });
  });
});
