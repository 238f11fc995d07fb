// Where the value of a `;`-separated connection string's property (SQL Server's JDBC, ADO.NET, ODBC)
// starts and ends: unquoted, quoted, braced, unterminated, inside JSON text or a code string (split
// out of secret-patterns.ts; see propertyValue).
import { propertyAt, propertyBefore } from './connection-string-properties.js';
import { REDACTED } from './redacted.js';
import {
  endsValue,
  escapedAt,
  isQuote,
  isSpace,
  lineEnd,
  propertyEnd,
  quoteClosesString,
  trimmedEnd,
} from './text-characters.js';
import {
  callValue,
  matchesAt,
  placeholderValue,
  prosePunctuation,
  templateLength,
} from './value-templates.js';

/**
 * Where a character next occurs in a text from a position on, the last answer kept: values are read
 * in order, and the values of one line look for the same `}` or line break one after the other, which
 * a search from each value read again (1 MB of `;password={` read 256 characters for each value).
 */
class NextOccurrence {
  private text = '';
  private from = 0;
  private found = -1;

  constructor(private readonly character: string) {}

  /** The first `character` of `text` at or after `from`, -1 without one. */
  in(text: string, from: number): number {
    if (text !== this.text || from < this.from || (this.found >= 0 && from > this.found)) {
      this.text = text;
      this.from = from;
      this.found = text.indexOf(this.character, from);
    }
    return this.found;
  }

  /** Lets go of the text (a long one is not kept alive until the next scan). */
  forget(): void {
    this.text = '';
    this.from = 0;
    this.found = -1;
  }
}

const nextClosingBrace = new NextOccurrence('}');

const nextLineBreak = new NextOccurrence('\n');

/** Lets go of the text closingBrace's searches remember: called once a scan is done. */
export function forgetSearchedText(): void {
  nextClosingBrace.forget();
  nextLineBreak.forget();
}

/**
 * End of the braced value opening at `open`, after its `}` (`}}` is an escaped `}`); -1 without one on
 * its line, within `limit` characters or, given what `opened` before the value, before the string
 * around it closes (the `}` of a JSON text holding the value is not its).
 */
function closingBrace(text: string, open: number, opened?: OpenedBefore, limit = 8192): number {
  const lineBreak = nextLineBreak.in(text, open + 1);
  const bound = Math.min(lineBreak < 0 ? text.length : lineBreak, open + limit);
  let close = nextClosingBrace.in(text, open + 1);
  // After a `}}`, the next `}` is looked for here: within the bound, and leaving the remembered one.
  while (close >= 0 && close < bound && text[close + 1] === '}') {
    close += 2;
    while (close < bound && text[close] !== '}') close += 1;
  }
  if (close < 0 || close >= bound) return -1;
  if (opened !== undefined)
    for (let index = open + 1; index < close; index += 1)
      if (closesStringAround(text, index, 1, opened)) return -1;
  return close + 1;
}

/**
 * End of a connection string's property value that starts at `start`: the next `;`, the end of the
 * line, or a quote closing the string around it (see quoteClosesString) — one like it opened before
 * the value on its line: without one the quote is the password's (`Password=zr 1"}?dr;`) —, at most
 * `limit` characters on.
 */
function connectionValueEnd(text: string, start: number, limit = 8192): number {
  let end = start;
  let opened: OpenedBefore | undefined;
  for (; end < text.length && end - start < limit; end += 1) {
    const character = text[end]!;
    if (character === ';' || character === '\n' || character === '\r') break;
    if (isQuote(character) && quoteClosesString(text, end) && !escapedAt(text, end)) {
      opened ??= new OpenedBefore(text, start);
      if (opened.has(character)) break;
    }
  }
  return end;
}

/**
 * Width of the quote a property value opens with at `start`: 1 for `"` or `'` (ADO.NET and ODBC quote
 * with either) or a backtick (as shells and code quote), 2 for `\"` (the same written in JSON
 * text or a code string), else 0.
 */
function openingQuoteWidth(text: string, start: number): number {
  const character = text[start];
  if (character === '"' || character === "'" || character === '`') return 1;
  return character === '\\' && text[start + 1] === '"' ? 2 : 0;
}

/**
 * The quotes on the line before a value, each looked for once, from the value back to the nearest one:
 * a line holding many values is still read about once. Whether one occurred there tells whether a
 * quote like it closes a string opened before the value. Three fields, not a Map and a closure: made
 * for each value read, those cost more than the rest of the value's reading.
 */
class OpenedBefore {
  private double: boolean | undefined;
  private single: boolean | undefined;
  private backtick: boolean | undefined;

  constructor(
    private readonly text: string,
    private readonly valueStart: number,
  ) {}

  /** Whether `quote` occurs on the line before the value. */
  has(quote: string): boolean {
    if (quote === '"') {
      this.double ??= this.occurs(quote);
      return this.double;
    }
    if (quote === "'") {
      this.single ??= this.occurs(quote);
      return this.single;
    }
    this.backtick ??= this.occurs(quote);
    return this.backtick;
  }

  private occurs(quote: string): boolean {
    for (let index = this.valueStart - 1; index >= 0; index -= 1) {
      const character = this.text[index];
      if (character === '\n' || character === '\r') return false;
      if (character === quote) return true;
    }
    return false;
  }
}

/**
 * Whether the quote at `at` ends the string a value opened by a quote of `width` is written in: an
 * unescaped `"` in JSON text or a code string (width 2), else a quote closing a string (see
 * quoteClosesString) that was opened before the value: without one, the quote is the password's
 * (`Password='ab"}cd;`).
 */
function closesStringAround(text: string, at: number, width: number, opened: OpenedBefore): boolean {
  const character = text[at]!;
  if (width === 2) return character === '"' && !escapedAt(text, at);
  return isQuote(character) && quoteClosesString(text, at) && !escapedAt(text, at) && opened.has(character);
}

/**
 * Whether the backslash at `at` writes a line break (`\n`, `\r`) that ends a `\"` value: only in a
 * string a `"` opened before the value (JSON text, a code string); elsewhere (`Password=\"ab\ncd;`)
 * the two characters are the password's.
 */
function lineBreakEscapedAt(text: string, at: number, opened: OpenedBefore): boolean {
  return (text[at + 1] === 'n' || text[at + 1] === 'r') && opened.has('"');
}

/**
 * Whether a quoted value can end at `at`: the end of the text or line, the string around it closing,
 * or a `;` followed by another property or by one of those (white space between is skipped). After a
 * value nothing closed (`unclosed`), the property's name is one word or a key written with spaces
 * (see propertyAt).
 */
function quotedValueEndsAt(
  text: string,
  at: number,
  width: number,
  opened: OpenedBefore,
  unclosed = false,
): boolean {
  let afterSemicolon = false;
  for (;;) {
    while (isSpace(text[at])) at += 1;
    const character = text[at];
    if (character === undefined || character === '\n' || character === '\r') return true;
    if (width === 2 && character === '\\' && lineBreakEscapedAt(text, at, opened)) return true;
    if (closesStringAround(text, at, width, opened)) return true;
    if (afterSemicolon) return propertyAt(text, at, unclosed);
    if (character !== ';') return false;
    afterSemicolon = true;
    at += 1;
  }
}

/**
 * A connection string's property value that opens with a quote of `width` at `start` (see
 * openingQuoteWidth). Quoted as ADO.NET and ODBC read it, up to the next quote that is not doubled
 * (`"a""b"` holds `a"b`) where the value ends (see quotedValueEndsAt): what is inside, the quotes
 * staying. Otherwise (no closing quote: `"abc;def`; more after it: `"ab"cd`, `'';x`) the drivers
 * refuse the string or read on, and a password starting with a quote is as likely as any other: the
 * value runs from its first quote to the next `;` that starts a property, the end of the line or of
 * the string around it, never past them — unless white space follows the closing quote and the value
 * would not end at a `;`: then what follows is prose or code (`password='abc' and then…`), kept, and
 * only what the quotes enclose goes (the end of a last property like `"ab" cdefgh` stays). Undefined
 * when it holds nothing: `""`, or a quote that closes the string (`"Server=db;Password=" + password`).
 */
function quotedPropertyValue(text: string, start: number, width: number): [number, number] | undefined {
  const quote = text.slice(start, start + width);
  const limit = Math.min(text.length, start + 8192);
  const opened = new OpenedBefore(text, start);
  if (width === 1 && closesStringAround(text, start, width, opened)) return undefined;
  for (let at = start + width; at < limit; at += 1) {
    const character = text[at];
    if (character === '\n' || character === '\r') break;
    if (text.startsWith(quote, at)) {
      if (text.startsWith(quote, at + width)) {
        at += 2 * width - 1;
        continue;
      }
      if (!quotedValueEndsAt(text, at + width, width, opened)) {
        // More after the closing quote: a connection string's value runs on to the next property, but
        // prose or code after a quoted value (`password='abc' and then…`) is not eaten to the line's end.
        const end = unterminatedValueEnd(text, start, width, opened);
        if (text[end] !== ';' && isSpace(text[at + width])) {
          const inside = text.slice(start + width, at);
          return inside === '' || inside === REDACTED ? undefined : [start + width, at];
        }
        return end === start + width ? undefined : [start, end];
      }
      const inside = text.slice(start + width, at);
      return inside === '' || inside === REDACTED ? undefined : [start + width, at];
    }
    if (width === 2 && character === '\\') at += 1;
    else if (width === 2 && character === '"') break;
  }
  const end = unterminatedValueEnd(text, start, width, opened);
  return end === start + width ? undefined : [start, end];
}

/**
 * End of a connection string's property value that opens at `start` with a quote of `width` (see
 * openingQuoteWidth) or a `{` (width 1) that nothing closes where the value could end: the next `;`
 * that starts a property or ends the string (see quotedValueEndsAt), the end of the line, or the
 * string around it closing, never past them, at most 8192 characters on.
 */
function unterminatedValueEnd(text: string, start: number, width: number, opened: OpenedBefore): number {
  // The opening character, a password's own character after that: it closes no string around it.
  // A backtick is not: in Markdown the code span around a connection string closes with one.
  const own = width === 1 && text[start] !== '`' ? text[start] : undefined;
  const limit = Math.min(text.length, start + 8192);
  let end = start + width;
  for (; end < limit; end += 1) {
    const character = text[end];
    if (character === '\n' || character === '\r') break;
    if (character === ';' && quotedValueEndsAt(text, end, width, opened, true)) break;
    if (width === 2 && character === '\\') {
      if (lineBreakEscapedAt(text, end, opened)) break;
      end += 1;
    } else if (character !== own && closesStringAround(text, end, width, opened)) break;
  }
  return Math.min(trimmedEnd(text, start, end), text.length);
}

/**
 * Whether the value at `start`, right after the `=` at `separator`, is the first property of a
 * connection string (`Password=…;Server=db`): a `;` and another `name=value` follow within 256
 * characters.
 */
export function startsConnectionString(text: string, separator: number, start: number): boolean {
  if (text[separator] !== '=' || start !== separator + 1) return false;
  // Bounded: every tight assignment is looked at (`password=a b password=a b …` read each to the end).
  const end = connectionValueEnd(text, start, 256);
  return text[end] === ';' && propertyAt(text, end + 1);
}

/**
 * The value of a credential property after a `;` at `semicolon` (-1 for the first property, see
 * startsConnectionString), `Password=` at `separator`, its value from `start` (past the white space
 * after `=`), as [start, end); undefined when it is not a credential; `assignment` when it is to be
 * read as any assignment's.
 *
 * In a connection string (SQL Server's JDBC, ADO.NET, ODBC: the `;` follows a `name=value` without
 * spaces around `=`, or an address, or the value is followed by `;` and another such pair), a value
 * runs to the next `;`, the end of the line or the quote closing the string it is written in (see
 * connectionValueEnd): spaces, quotes, `,`, `&` and `(` are the password's, and spaces around `=` are
 * trimmed (`Password= Summer!`). Quoted (`"a;b"`, `'a;b'`) or braced (`{a;b}`, `}}` standing for a
 * `}`) when it holds a `;`: see quotedPropertyValue; a braced one goes braces and all.
 * Elsewhere a value right after `=` ends at white space or a quote (`Note; password=x and…`), and one
 * after a space is a password only when it is one word up to the `;` or the end of the line
 * (`Append ;password= and then…` is prose).
 *
 * Left alone: a whole template (`${DB_PASSWORD}`, `%s`, `<password>`, `{0}`, `{{ db_password }}`; see
 * templateForms), placeholders, punctuation followed by a word (`;password=, then…`) and a call
 * (`token=next(state)`).
 */
export function propertyValue(
  text: string,
  separator: number,
  start: number,
  spacedBefore: boolean,
  semicolon: number,
): [number, number] | undefined | 'assignment' {
  const spaced = spacedBefore || start !== separator + 1;
  const through = connectionValueEnd(text, start);
  const connectionString =
    text[separator] === '=' &&
    (propertyBefore(text, semicolon) || (text[through] === ';' && propertyAt(text, through + 1)));
  if (spacedBefore && !connectionString) return 'assignment';
  const quote = openingQuoteWidth(text, start);
  if (quote > 0) return connectionString ? quotedPropertyValue(text, start, quote) : 'assignment';
  const template = templateLength(text, start);
  if (template > 0) {
    const after = start + template;
    const whole =
      connectionString || spaced ? after === trimmedEnd(text, start, through) : endsValue(text, after);
    if (whole) return undefined;
  }
  let end: number;
  if (text[start] === '{') {
    if (connectionString) {
      // Braced, a value ends where a quoted one does (see quotedValueEndsAt). A `}` that does not end
      // it (`{7}xQ9`, `{{ab;cd}ef}`, `{ab},cd`, `{ab};cd`), or none, leaves it to run on as an
      // unterminated quoted value does: to the next `;` that starts a property, the end of the line
      // or of a JSON text around it, never past them.
      const opened = new OpenedBefore(text, start);
      // Bounded: a value without a `}` ends at the next property, so each `;password={` of a long text
      // would read on to the bound.
      const close = closingBrace(text, start, opened, 256);
      end =
        close >= 0 && quotedValueEndsAt(text, close, 1, opened)
          ? close
          : unterminatedValueEnd(text, start, 1, opened);
    } else {
      const close = closingBrace(text, start);
      if (close < 0) end = lineEnd(text, start);
      else end = endsValue(text, close) ? close : propertyEnd(text, close);
    }
  } else if (connectionString || spaced) {
    end = trimmedEnd(text, start, through);
    const words = /\s/.test(text.slice(start, end));
    if (spaced && words && !(connectionString && text[through] === ';')) return 'assignment';
  } else end = propertyEnd(text, start);
  const value = text.slice(start, end);
  if (value === '' || placeholderValue.test(value)) return undefined;
  if (matchesAt(prosePunctuation, text, start) || (!connectionString && matchesAt(callValue, text, start)))
    return undefined;
  return [start, end];
}
