// Character classes and the ends of names, quoted values, lines and unquoted values, shared by the
// assignment and connection-string readers (split out of secret-patterns.ts).
export function isNameCharacter(code: number): boolean {
  return (
    (code >= 97 && code <= 122) || // a-z
    (code >= 65 && code <= 90) || // A-Z
    (code >= 48 && code <= 57) || // 0-9
    code === 95 || // _
    code === 45 || // -
    code === 46 // .
  );
}

/** True for a character of `\w` (`[A-Za-z0-9_]`). */
export function isWordCharacter(code: number): boolean {
  return (
    (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 95
  );
}

export function isQuote(character: string | undefined): boolean {
  return character === '"' || character === "'" || character === '`';
}

export function isSpace(character: string | undefined): boolean {
  return character === ' ' || character === '\t';
}

/** Start of the name that ends at `end`: letters, digits, `_`, `.`, `-`, at most 64 of them. */
export function nameStart(text: string, end: number): number {
  let start = end;
  while (start > 0 && end - start < 64 && isNameCharacter(text.charCodeAt(start - 1))) start -= 1;
  return start;
}

/** End of a quoted value that starts at `open` (the quote), honouring backslash escapes; -1 if none. */
export function closingQuote(text: string, open: number): number {
  const quote = text[open];
  for (let index = open + 1; index < text.length && index - open < 8192; index += 1) {
    const character = text[index];
    if (character === '\\') index += 1;
    else if (character === quote) return index;
    else if (character === '\n') return -1;
  }
  return -1;
}

/**
 * How many strings deep a `"` after `backslashes` backslashes closes one: each level of JSON text held
 * in a JSON string doubles the backslashes and adds one (`"` 0, `\"` 1, `\\\"` 2). After an even run the
 * backslashes are escaped ones of the text and the quote closes the string it is written in (0).
 */
function quoteDepth(backslashes: number): number {
  let depth = 0;
  for (let run = backslashes; run % 2 === 1; run = (run - 1) / 2) depth += 1;
  return depth;
}

/**
 * Width of the escaped quote opening at `at` (`\"` in JSON text held in a JSON string: 2; `\\\"` a
 * level deeper: 4), 0 without one.
 */
export function escapedQuoteWidth(text: string, at: number): number {
  let end = at;
  while (text[end] === '\\' && end - at < 64) end += 1;
  return end > at && text[end] === '"' && quoteDepth(end - at) > 0 ? end - at + 1 : 0;
}

/**
 * Start of the escaped quote that closes the one of `width` opening at `open` (see escapedQuoteWidth):
 * the next quote as deep; -1 when a string around it closes first (a quote less deep), at a line break
 * or 8192 characters on. Quotes deeper are the value's (`\\\"` inside a `\"` value).
 */
export function closingEscapedQuote(text: string, open: number, width: number): number {
  const depth = quoteDepth(width - 1);
  const limit = Math.min(text.length, open + 8192);
  let index = open + width;
  while (index < limit) {
    const character = text[index];
    if (character === '\n' || character === '\r' || character === '"') return -1;
    if (character !== '\\') {
      index += 1;
      continue;
    }
    let end = index;
    while (end < limit && text[end] === '\\') end += 1;
    if (text[end] === '"') {
      const found = quoteDepth(end - index);
      // The backslashes before the closing quote's own are the value's (`ab\\\\\"` ends in `\`).
      if (found === depth) return end - width + 1;
      if (found < depth) return -1;
      end += 1;
    } else if ((text[end] === 'n' || text[end] === 'r') && (end - index) % width !== 0) {
      // A line break of the text the value is written in (`\n` around a `\"` value, `\\n` or `\n` around
      // a `\\\"` one), not one escaped inside the value (`\\n` in a `\"` value): it ends on its line.
      return -1;
    }
    index = end;
  }
  return -1;
}

/** End of the line `start` is on, at most 8192 characters on. */
export function lineEnd(text: string, start: number): number {
  let end = start;
  while (end < text.length && end - start < 8192 && text[end] !== '\n') end += 1;
  return end;
}

// Characters that end an unquoted value: separators of queries, headers, code and markup.
const valueEnd = /[\s"'`&,;<>()[\]{}|\\]/;

// Characters that end the value of a `;`-property outside a connection string (see propertyValue).
const propertyValueEnd = /[\s"'`;]/;

/** End of an unbraced property value: the next `;`, white space or quote. */
export function propertyEnd(text: string, start: number): number {
  let end = start;
  while (end < text.length && end - start < 8192 && !propertyValueEnd.test(text[end]!)) end += 1;
  return end;
}

export function unquotedEnd(text: string, start: number): number {
  let end = start;
  while (end < text.length && end - start < 8192 && !valueEnd.test(text[end]!)) end += 1;
  return end;
}

/**
 * Whether the quote at `at` closes the string a connection string is written in (`"Server=…;Password=…"`,
 * a JSON text): followed by the end, white space or a separator. Inside a value a quote is the
 * password's (`Tr0ub'4dor"x9`); a JSON text escapes it.
 */
export function quoteClosesString(text: string, at: number): boolean {
  const next = text[at + 1];
  return next === undefined || /[\s,;:)\]}>]/.test(next);
}

/** Whether the character at `at` follows an odd run of backslashes (`\\"` in a JSON text). */
export function escapedAt(text: string, at: number): boolean {
  let count = 0;
  while (at - count > 0 && text[at - count - 1] === '\\') count += 1;
  return count % 2 === 1;
}

/** Whether a value can end at `at`: the end, white space, `;`, `,` or a quote closing a string. */
export function endsValue(text: string, at: number): boolean {
  const character = text[at];
  return (
    character === undefined || /[\s;,]/.test(character) || (isQuote(character) && quoteClosesString(text, at))
  );
}

/** `end` moved back over the white space before it, not past `start`. */
export function trimmedEnd(text: string, start: number, end: number): number {
  while (end > start && isSpace(text[end - 1])) end -= 1;
  return end;
}
