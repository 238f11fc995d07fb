import { describe, expect, it } from 'vitest';
import { sideBySide } from './checkpoint-comparison.js';

describe('sideBySide', () => {
  it('pairs a removed block with the added block after it, and keeps equal lines on both sides', () => {
    expect(sideBySide('a\nb\nc\n', 'a\nB\nc\nd\n')).toEqual([
      { left: 'a', right: 'a', kind: 'same' },
      { left: 'b', right: 'B', kind: 'changed' },
      { left: 'c', right: 'c', kind: 'same' },
      { right: 'd', kind: 'added' },
    ]);
    expect(sideBySide('a\nb', 'a\nb\nc')).toEqual([
      { left: 'a', right: 'a', kind: 'same' },
      { left: 'b', right: 'b', kind: 'same' },
      { right: 'c', kind: 'added' },
    ]);
    expect(sideBySide('one\ntwo', undefined)).toEqual([
      { left: 'one', kind: 'removed' },
      { left: 'two', kind: 'removed' },
    ]);
  });
});
