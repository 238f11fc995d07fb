import stringWidth from 'string-width';

/**
 * How many terminal columns text takes, and where to cut it. The widths are string-width's, the
 * measure Ink lays the screen out with: one owner of the width rules (East Asian wide and fullwidth
 * characters and emoji two columns, combining marks and zero-width characters none), so a line this
 * module fits is a line Ink does not cut or wrap again. Text is only ever cut between graphemes (what
 * the user sees as one character: a letter with its accents, an emoji sequence joined with U+200D),
 * found with Intl.Segmenter, so a flag, a family emoji or an accent is never split from its base.
 * Control characters are escaped before text gets here (see clipLine).
 */

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Printable ASCII only: one column per character, no segmentation needed (most lines). */
const plainAscii = /^[\x20-\x7e]*$/;

/** The graphemes of `text`, in order. */
export function graphemes(text: string): string[] {
  if (plainAscii.test(text)) return text.split('');
  return Array.from(segmenter.segment(text), (part) => part.segment);
}

/** The columns one grapheme takes: 0, 1 or 2. */
export function graphemeColumns(grapheme: string): number {
  return plainAscii.test(grapheme) ? grapheme.length : stringWidth(grapheme);
}

/** The columns `text` takes in a terminal. */
export function textColumns(text: string): number {
  return plainAscii.test(text) ? text.length : stringWidth(text);
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
