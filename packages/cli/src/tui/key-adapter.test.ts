import type { Key } from 'ink';
import { describe, expect, it } from 'vitest';
import { toKeyPress } from './key-adapter.js';

const noKey = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
} as Key;

describe('toKeyPress', () => {
  // Review r-tui finding 1: a paste longer than one read ran as browser keys. With bracketed paste on,
  // Ink reports the terminal's marks ESC [200~ and ESC [201~ as unnamed keys `[200~` and `[201~`.
  it('names the bracketed-paste marks', () => {
    expect(toKeyPress('[200~', noKey)).toEqual({ input: '', name: 'paste-start' });
    expect(toKeyPress('[201~', noKey)).toEqual({ input: '', name: 'paste-end' });
    expect(toKeyPress('one\rtwo', noKey)).toEqual({ input: 'one\rtwo', ctrl: false, shift: false });
    expect(toKeyPress('toString', noKey).name).toBeUndefined();
  });
});
