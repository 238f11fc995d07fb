// A text as a server reads it, percent escapes decoded, and the way back from a position in that view to
// the text. Split from secret-values.ts, which looks for registered values in both.

function hexDigit(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 32;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/** The byte percent-escaped at `at` (`%2B`, `%2f`, `%C3`); else -1. */
function escapedByte(text: string, at: number): number {
  if (text.charCodeAt(at) !== 37) return -1;
  const high = hexDigit(text.charCodeAt(at + 1));
  const low = hexDigit(text.charCodeAt(at + 2));
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

/**
 * The character percent-escaped at `at`, in UTF-8 as URLs write it (`%40` @, `%C3%A9` é, `%F0%9F%98%80`
 * 😀, two UTF-16 units), with how many characters of `text` its escapes take; undefined when they are
 * no character (a lone continuation byte, a lead byte without its continuation, an overlong form, a
 * surrogate, past U+10FFFF). Checked byte by byte: a decoder throwing on each made 1 MB of `%C0%AF`
 * take 0.6 s, sixty times as long as valid escapes.
 */
function escapedSequence(text: string, at: number): [character: string, length: number] | undefined {
  const lead = escapedByte(text, at);
  if (lead < 0) return undefined;
  if (lead < 0x80) return [String.fromCharCode(lead), 3];
  // C0 and C1 start only overlong forms, F5 to FF nothing.
  const count = lead < 0xc2 || lead > 0xf4 ? 0 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  if (count === 0) return undefined;
  let code = lead & (0x7f >> count);
  for (let index = 1; index < count; index += 1) {
    const next = escapedByte(text, at + 3 * index);
    if (next < 0x80 || next > 0xbf) return undefined;
    code = (code << 6) | (next & 0x3f);
  }
  const overlong = (count === 3 && code < 0x800) || (count === 4 && code < 0x10000);
  if (overlong || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return undefined;
  return [String.fromCodePoint(code), 3 * count];
}

/** A decoded view of a text and how to find a position of it in the text (see textPosition). */
export interface DecodedView {
  view: string;
  /** Where in the view each decoded character is, in order. */
  decodedAt: number[];
  /** How many characters of the text the view is short of after each decoded character. */
  shortAfter: number[];
}

/**
 * `text` as a server reads it: percent escapes decoded (`%2B`, `%2f`, `%40`, `%C3%A9`: whatever the
 * case and whichever characters the writer chose to escape; Python's `quote` keeps `/`), and `+` read
 * as a space when `plusAsSpace` (form encoding); with where each escape decoded is, to map positions
 * back (see textPosition). Undefined when it would be `text` itself. Needles are one spelling each: a
 * text escaping some characters and not others, or mixing cases, matched none.
 */
export function decodedView(text: string, plusAsSpace: boolean): DecodedView | undefined {
  const plain = (from: number, to: number) =>
    plusAsSpace ? text.slice(from, to).replaceAll('+', ' ') : text.slice(from, to);
  let view = '';
  let copied = 0;
  const decodedAt: number[] = [];
  const shortAfter: number[] = [];
  for (let at = text.indexOf('%'); at !== -1; at = text.indexOf('%', at + 1)) {
    const sequence = escapedSequence(text, at);
    if (sequence === undefined) continue;
    const [character, length] = sequence;
    view += plain(copied, at);
    decodedAt.push(view.length);
    view += character;
    shortAfter.push(at + length - view.length);
    copied = at + length;
    at = copied - 1;
  }
  if (decodedAt.length === 0 && !(plusAsSpace && text.includes('+'))) return undefined;
  return { view: view + plain(copied, text.length), decodedAt, shortAfter };
}

/**
 * Where position `position` of a decoded view is in its text: as many characters on as the view is
 * short of after the last character decoded before it (binary search over them).
 */
export function textPosition(decoded: DecodedView, position: number): number {
  let low = 0;
  let high = decoded.decodedAt.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (decoded.decodedAt[middle]! < position) low = middle + 1;
    else high = middle;
  }
  return low === 0 ? position : position + decoded.shortAfter[low - 1]!;
}
