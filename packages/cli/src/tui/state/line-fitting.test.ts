import { describe, expect, it } from 'vitest';
import { clipLine, shortenName, wrapText } from './line-fitting.js';
import { screenText } from './screen.js';
import { textColumns } from './terminal-columns.js';

describe('line fitting', () => {
  it('clips styled lines and pads them', () => {
    expect(clipLine([{ text: 'abc' }, { text: 'def', bold: true }], 5)).toEqual([
      { text: 'abc' },
      { text: 'd~', bold: true },
    ]);
    expect(clipLine([{ text: 'ab' }], 4, true)).toEqual([{ text: 'ab' }, { text: '  ' }]);
  });

  it('counts terminal columns: wide characters two, combining marks none, and cuts whole graphemes', () => {
    expect(screenText([clipLine([{ text: '🚀🚀🚀' }, { text: '|' }], 5)])).toBe('🚀🚀~');
    // A wide character that would straddle the edge is left out; its column is padded.
    expect(clipLine([{ text: '機能機能' }], 6, true).map((segment) => segment.text)).toEqual(['機能~', ' ']);
    expect(screenText([clipLine([{ text: 'cafe\u0301!' }, { text: '|' }], 6)])).toBe('cafe\u0301!|');
    expect(screenText([clipLine([{ text: 'ab👨‍👩‍👧‍👦cd' }], 4)])).toBe('ab~');
    expect(screenText([clipLine([{ text: 'a🇫🇷b' }], 3)])).toBe('a~');
    const shrunk = clipLine(
      [{ text: `機能/${'長い枝の名前'.repeat(3)}`, shrink: true }, { text: ' (1) orphaned' }],
      24,
    );
    expect(textColumns(screenText([shrunk]))).toBeLessThanOrEqual(24);
    expect(screenText([shrunk])).toBe('機~長い枝の (1) orphaned');
  });

  it('shortens a name in its middle, keeping the start of what follows its last /', () => {
    expect(shortenName('flow-states/6f0d8a52-3c1e-4b7a-9d24-5e8b1f7c0a93', 9)).toBe('fl~6f0d8a');
    expect(shortenName('flow-states/order-1234', 16)).toBe('flow-~order-1234');
    expect(shortenName('try-the-much-longer-outline-with-its-sources', 15)).toBe('try-the~sources');
    expect(shortenName('main', 4)).toBe('main');
  });

  it('wraps keeping line breaks', () => {
    expect(wrapText('abcdef\n\nxy', 4)).toEqual(['abcd', 'ef', '', 'xy']);
  });

  // Task h2 #4: a run's error, its output and a paused flow's question were wrapped inside words.
  it('wraps between words, cutting only a word wider than the line', () => {
    expect(wrapText('a resume continues on a new branch', 10)).toEqual([
      'a resume',
      'continues',
      'on a new',
      'branch',
    ]);
    // Task h8 #4 (review R3): the second of two spaces started the next line, cutting a word that fits.
    expect(wrapText('abc  def', 3)).toEqual(['abc', 'def']);
    expect(wrapText('End of it.  Next sentence here', 12)).toEqual([
      'End of it.',
      'Next',
      'sentence',
      'here',
    ]);
    expect(wrapText('see 20261128T052243677-31f83de4 now', 12)).toEqual([
      'see',
      '20261128T052',
      '243677-31f83',
      'de4 now',
    ]);
  });
});
