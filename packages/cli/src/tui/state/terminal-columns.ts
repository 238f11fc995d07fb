/**
 * How many terminal columns text takes, counted per grapheme (what the user sees as one character:
 * a letter with its accents, an emoji sequence joined with U+200D) as terminals draw them: East Asian
 * wide and fullwidth characters and emoji take two columns, a combining mark or a zero-width character
 * none, everything else one. Text is only ever cut between graphemes, so a flag, a family emoji or an
 * accent is never split from its base. Control characters are escaped before text gets here (see
 * clipLine), so they are not counted.
 */

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Printable ASCII only: one column per character, no segmentation needed (most lines). */
const plainAscii = /^[\x20-\x7e]*$/;

/** Graphemes drawn in no column: combining marks and zero-width characters on their own. */
const zeroWidth = /^[\p{Mn}\p{Me}\u200b-\u200f\u2060-\u2064\ufeff]+$/u;

/** Emoji drawn as pictures (two columns): by default, asked for with U+FE0F, or a flag's two letters. */
const wideEmoji = /\p{Emoji_Presentation}|\p{Extended_Pictographic}\ufe0f|\p{Regional_Indicator}{2}/u;

/** East Asian wide and fullwidth ranges (Unicode's EastAsianWidth W and F), by first code point. */
const wideRanges: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f], // Hangul Jamo initial consonants
  [0x2e80, 0x303e], // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
  [0x3041, 0x33ff], // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, Kanbun, CJK compatibility
  [0x3400, 0x4dbf], // CJK unified ideographs extension A
  [0x4e00, 0x9fff], // CJK unified ideographs
  [0xa000, 0xa4cf], // Yi
  [0xa960, 0xa97f], // Hangul Jamo extended A
  [0xac00, 0xd7a3], // Hangul syllables
  [0xf900, 0xfaff], // CJK compatibility ideographs
  [0xfe10, 0xfe19], // vertical forms
  [0xfe30, 0xfe6f], // CJK compatibility forms, small form variants
  [0xff00, 0xff60], // fullwidth forms
  [0xffe0, 0xffe6], // fullwidth signs
  [0x16fe0, 0x18aff], // ideographic symbols, Tangut
  [0x1b000, 0x1b2ff], // Kana supplement and extended
  [0x1f200, 0x1f2ff], // enclosed ideographic supplement
  [0x20000, 0x2fffd], // CJK extensions B to F, compatibility supplement
  [0x30000, 0x3fffd], // CJK extensions G and H
];

function isWideCodePoint(codePoint: number): boolean {
  return wideRanges.some(([first, last]) => codePoint >= first && codePoint <= last);
}

/** The graphemes of `text`, in order. */
export function graphemes(text: string): string[] {
  if (plainAscii.test(text)) return text.split('');
  return Array.from(segmenter.segment(text), (part) => part.segment);
}

/** The columns one grapheme takes: 0, 1 or 2. */
export function graphemeColumns(grapheme: string): number {
  if (zeroWidth.test(grapheme)) return 0;
  if (wideEmoji.test(grapheme) || isWideCodePoint(grapheme.codePointAt(0) ?? 0)) return 2;
  return 1;
}

/** The columns `text` takes in a terminal. */
export function textColumns(text: string): number {
  if (plainAscii.test(text)) return text.length;
  let columns = 0;
  for (const grapheme of graphemes(text)) columns += graphemeColumns(grapheme);
  return columns;
}

/**
 * The longest start of `text` (from its end when `fromEnd`) that takes at most `columns` columns, in
 * whole graphemes, and the columns it takes: one less than asked when a wide grapheme would straddle
 * the limit.
 */
export function fitColumns(
  text: string,
  columns: number,
  fromEnd = false,
): { text: string; columns: number } {
  const parts = graphemes(text);
  if (fromEnd) parts.reverse();
  const kept: string[] = [];
  let used = 0;
  for (const part of parts) {
    const width = graphemeColumns(part);
    if (used + width > columns) break;
    kept.push(part);
    used += width;
  }
  if (fromEnd) kept.reverse();
  return { text: kept.join(''), columns: used };
}
