import { isInertText } from './inert-text.js';
import { redactionRegistry } from './redaction-registry.js';
import { isSecretKey } from './secret-names.js';
import { redactSecretValues } from './secret-values.js';

export const REDACTED = '[REDACTED]';

// Credentials recognizable by their shape. Deliberately broad: a false positive costs a redacted
// string, a false negative leaks a key. Measured on prose, three scans are cheaper than one: V8 tries
// each position against the alternatives of one first character at a time when they are grouped by
// it, a long alternation gets slower with every alternative added, and the PEM header is found by a
// plain substring search. A shape must start a word, but the expressions leave that out (see
// `replaceShapes`): a leading `\b` keeps V8 from skipping ahead to the characters a shape starts
// with, and made the scan of 2 KB of prose five times slower.
const shapesStartingLowerCase = new RegExp(
  `(?:${[
    // Anthropic; OpenAI and compatible; Stripe secret keys
    /s(?:k-ant-[A-Za-z0-9_-]{8,}|k-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}|k_(?:live|test)_[A-Za-z0-9]{16,})/,
    // GitHub tokens; GitLab
    /g(?:h[pousr]_[A-Za-z0-9]{20,}|ithub_pat_[A-Za-z0-9_]{20,}|lpat-[A-Za-z0-9_-]{20,})/,
    /xox[abposr]-[A-Za-z0-9-]{10,}/, // Slack
    /hf_[A-Za-z0-9]{20,}/, // Hugging Face
    /[rp]k_(?:live|test)_[A-Za-z0-9]{16,}/, // Stripe restricted and publishable keys
    /npm_[A-Za-z0-9]{30,}/, // npm
    /eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/, // JWT
  ]
    .map((shape) => shape.source)
    .join('|')})`,
  'g',
);
const shapesStartingUpperCase = new RegExp(
  `(?:${[
    /A(?:KIA[0-9A-Z]{16}\b|Iza[0-9A-Za-z_-]{30,})/, // AWS access key id; Google
    /B(?:earer|asic)\s+[A-Za-z0-9._~+/=-]{16,}/, // authorization header values
  ]
    .map((shape) => shape.source)
    .join('|')})`,
  'g',
);
const privateKey = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g;

// The password of a URL's userinfo (`postgres://app:…@db`). Captures what precedes it instead of a
// lookbehind, which V8 tries at every position of the text.
const urlPassword = /(:\/\/[^\s:/@]{1,128}:)[^\s@/]{3,}@/g;
// The password of Oracle's JDBC address (`jdbc:oracle:thin:scott/…@db:1521/ORCL`, quoted when it holds
// `@` or `/`), which has no `://`. Looked for only in a text that holds `:oracle:` (JDBC's own case).
// Every part is bounded: unbounded, each `jdbc:oracle:thin:u/` of a long text without `@` read to its
// end (200 KB took 3.3 s).
const oraclePassword = /(jdbc:oracle:[A-Za-z0-9]{1,32}:[^\s/@:"]{1,128}\/)("[^"\n]{0,256}"|[^\s@"]{1,256})@/g;

function isNameCharacter(code: number): boolean {
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
function isWordCharacter(code: number): boolean {
  return (
    (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 95
  );
}

/**
 * `text` with every match of `shapes` (a global expression) that starts a word replaced by
 * `[REDACTED]`: what `text.replace(/\b(?:…)/g, …)` gives. A match inside a word is passed over and
 * the search goes on from its second character, so a shape starting later inside it is still found.
 */
function replaceShapes(text: string, shapes: RegExp): string {
  shapes.lastIndex = 0;
  let result = '';
  let copied = 0;
  for (let match = shapes.exec(text); match !== null; match = shapes.exec(text)) {
    const start = match.index;
    if (start > 0 && isWordCharacter(text.charCodeAt(start - 1))) {
      shapes.lastIndex = start + 1;
      continue;
    }
    result += text.slice(copied, start) + REDACTED;
    copied = start + match[0].length;
  }
  return copied === 0 ? text : result + text.slice(copied);
}

function isQuote(character: string | undefined): boolean {
  return character === '"' || character === "'" || character === '`';
}

const authorizationSchemes = /^(?:Bearer|Basic|Token|Digest|Bot)[ \t]+/i;
// Characters that end an unquoted value: separators of queries, headers, code and markup.
const valueEnd = /[\s"'`&,;<>()[\]{}|\\]/;
// Characters that end the value of a `;`-property outside a connection string (see propertyValue).
const propertyValueEnd = /[\s"'`;]/;
// Words a setting holds instead of a credential (`token: null`).
const placeholderValue = /^(?:null|nil|none|undefined|true|false|redacted|\*+|x+)$/i;
// What a template holds where its password will go, each form whole: `${DB_PASSWORD}`, `$DB_PASSWORD`,
// `$(cat /run/secrets/db)`, `%s`, `%(password)s`, `%DB_PASSWORD%`, `<password>`, `[password]`, `{0}`
// (.NET's String.Format), `{{ db_password }}` (Jinja, Handlebars). Names in `<…>` and `[…]` have no
// digits, and `$NAME`, `%NAME%` are upper case: `<Kx9q>`, `$ecr3t` are passwords. Every part is bounded.
const templateForms = [
  /\$\{[\w.:-]{1,128}\}/,
  /\$[A-Z_][A-Z0-9_]{0,127}/,
  /\$\([^();\n]{0,256}\)/,
  /%s/,
  /%\([\w.]{1,128}\)s/,
  /%[A-Z_][A-Z0-9_]{0,127}%/,
  /<[A-Za-z_][A-Za-z _.-]{0,127}>/,
  /\[[A-Za-z_][A-Za-z _.-]{0,127}\]/,
  /\{[0-9]{1,2}\}/,
  /\{\{[ \t]{0,8}[\w.]{1,128}[ \t]{0,8}\}\}/,
]
  .map((form) => form.source)
  .join('|');
// Sticky: tried once, where a value starts.
const templateAtValue = new RegExp(`(?:${templateForms})`, 'y');
const wholeTemplate = new RegExp(`^(?:${templateForms})$`);
// Punctuation and then a word after `=` (`;password=, then…`, `;password=... in`) is a sentence.
const prosePunctuation = /[.,:!?]{1,64}[ \t]+\w/y;
// A call assigned in code (`token=next(state)`, `password=os.getenv("…")`): a name without digits,
// then `(`. `Tr0ub(4dor)` is a password.
const callValue = /[A-Za-z_$][A-Za-z_$.]{0,63}\(/y;

/** Length of the template starting at `start`, or -1 (see templateForms). */
function templateLength(text: string, start: number): number {
  templateAtValue.lastIndex = start;
  const match = templateAtValue.exec(text);
  return match === null ? -1 : match[0].length;
}

/** Whether a sticky expression matches at `start`. */
function matchesAt(expression: RegExp, text: string, start: number): boolean {
  expression.lastIndex = start;
  return expression.test(text);
}

/** The Oracle password of a match of `oraclePassword` replaced, unless it is a template, unquoted and whole. */
function replaceOraclePassword(match: string, before: string, password: string): string {
  return !password.startsWith('"') && wholeTemplate.test(password) ? match : `${before}${REDACTED}@`;
}

/** Start of the name that ends at `end`: letters, digits, `_`, `.`, `-`, at most 64 of them. */
function nameStart(text: string, end: number): number {
  let start = end;
  while (start > 0 && end - start < 64 && isNameCharacter(text.charCodeAt(start - 1))) start -= 1;
  return start;
}

/**
 * Whether the name ending at `end` is a credential. Prose splits names in two (`API key: …`), so the
 * word before counts too; `key` alone counts in a URL query (`?key=…`, Google's API keys).
 */
function credentialNameEndsAt(text: string, end: number): boolean {
  const start = nameStart(text, end);
  if (start === end) return false;
  const name = text.slice(start, end);
  if (isSecretKey(name)) return true;
  if ((text[start - 1] === '?' || text[start - 1] === '&') && name.toLowerCase() === 'key') return true;
  if (text[start - 1] !== ' ' || start < 2) return false;
  const before = nameStart(text, start - 1);
  return before < start - 1 && isSecretKey(`${text.slice(before, start - 1)}_${text.slice(start, end)}`);
}

/** End of a quoted value that starts at `open` (the quote), honouring backslash escapes; -1 if none. */
function closingQuote(text: string, open: number): number {
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

/** End of the line `start` is on, at most 8192 characters on. */
function lineEnd(text: string, start: number): number {
  let end = start;
  while (end < text.length && end - start < 8192 && text[end] !== '\n') end += 1;
  return end;
}

/** End of an unbraced property value: the next `;`, white space or quote. */
function propertyEnd(text: string, start: number): number {
  let end = start;
  while (end < text.length && end - start < 8192 && !propertyValueEnd.test(text[end]!)) end += 1;
  return end;
}

function unquotedEnd(text: string, start: number): number {
  let end = start;
  while (end < text.length && end - start < 8192 && !valueEnd.test(text[end]!)) end += 1;
  return end;
}

function isSpace(character: string | undefined): boolean {
  return character === ' ' || character === '\t';
}

/**
 * Whether the quote at `at` closes the string a connection string is written in (`"Server=…;Password=…"`,
 * a JSON text): followed by the end, white space or a separator. Inside a value a quote is the
 * password's (`Tr0ub'4dor"x9`); a JSON text escapes it.
 */
function quoteClosesString(text: string, at: number): boolean {
  const next = text[at + 1];
  return next === undefined || /[\s,;:)\]}>]/.test(next);
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

/** Whether the character at `at` follows an odd run of backslashes (`\\"` in a JSON text). */
function escapedAt(text: string, at: number): boolean {
  let count = 0;
  while (at - count > 0 && text[at - count - 1] === '\\') count += 1;
  return count % 2 === 1;
}

/** Whether a value can end at `at`: the end, white space, `;`, `,` or a quote closing a string. */
function endsValue(text: string, at: number): boolean {
  const character = text[at];
  return (
    character === undefined || /[\s;,]/.test(character) || (isQuote(character) && quoteClosesString(text, at))
  );
}

/** `end` moved back over the white space before it, not past `start`. */
function trimmedEnd(text: string, start: number, end: number): number {
  while (end > start && isSpace(text[end - 1])) end -= 1;
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
  const own = width === 1 ? text[start] : undefined;
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
 * Whether `=` at `at` joins a property's name and value with no space on either side (`Server=db`):
 * code spaces them (`let i = 0; token = 0;` is no connection string).
 */
function isTightEquals(text: string, at: number): boolean {
  const next = text[at + 1];
  return isNameCharacter(text.charCodeAt(at - 1)) && next !== undefined && next !== '=' && !/\s/.test(next);
}

/**
 * Whether the text before the `;` at `semicolon`, back to the `;` or line before it, is a property or
 * an address: it holds a tight `name=value` or a `://` (`Server=db;`, `jdbc:sqlserver://db:1433;`).
 */
function propertyBefore(text: string, semicolon: number): boolean {
  for (let at = semicolon - 1; at > 0 && semicolon - at <= 256; at -= 1) {
    const character = text[at];
    if (character === ';' || character === '\n') return false;
    if (character === '=' && isTightEquals(text, at)) return true;
    if (character === ':' && text[at + 1] === '/' && text[at + 2] === '/') return true;
  }
  return false;
}

// The keys ADO.NET (SqlClient) and ODBC write with spaces. Any name with spaces is a property's where
// a value has ended, but after a value nothing closed (`password={v]k;YtZ739x dbname=x`, libpq's
// spaced properties) only these are: the rest may be the password's.
const spacedPropertyNames = new Set([
  'application intent',
  'application name',
  'attach db filename',
  'connect retry count',
  'connect retry interval',
  'connect timeout',
  'connection lifetime',
  'connection timeout',
  'current language',
  'data source',
  'extended properties',
  'failover partner',
  'initial catalog',
  'integrated security',
  'load balance timeout',
  'max pool size',
  'min pool size',
  'multiple active result sets',
  'multi subnet failover',
  'network library',
  'packet size',
  'persist security info',
  'pool blocking period',
  'trust server certificate',
  'type system version',
  'user id',
  'user instance',
  'workstation id',
]);

/**
 * Whether a property (`Encrypt=yes`, `User Id=sa`) starts at `at`, after white space; after a value
 * nothing closed (`unclosed`), only one whose name has no space or is in spacedPropertyNames.
 */
function propertyAt(text: string, at: number, unclosed = false): boolean {
  while (isSpace(text[at])) at += 1;
  const nameFrom = at;
  let spaced = false;
  while (at - nameFrom < 64 && (isNameCharacter(text.charCodeAt(at)) || isSpace(text[at]))) {
    if (isSpace(text[at])) spaced = true;
    at += 1;
  }
  if (
    !(
      at > nameFrom &&
      isNameCharacter(text.charCodeAt(nameFrom)) &&
      text[at] === '=' &&
      isTightEquals(text, at)
    )
  )
    return false;
  return (
    !unclosed ||
    !spaced ||
    spacedPropertyNames.has(
      text
        .slice(nameFrom, at)
        .toLowerCase()
        .replace(/[ \t]+/g, ' '),
    )
  );
}

/**
 * Whether the value at `start`, right after the `=` at `separator`, is the first property of a
 * connection string (`Password=…;Server=db`): a `;` and another `name=value` follow within 256
 * characters.
 */
function startsConnectionString(text: string, separator: number, start: number): boolean {
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
function propertyValue(
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

/**
 * A value after `name =` or `name:` that is a credential, not code or prose. Tight `name=value`
 * (queries, environment files) always is, unless it is a call; spaced or `:` forms (YAML, headers,
 * code, prose such as "token: the unit of text") only when the value looks random: letters with
 * digits, or a long run of token characters.
 */
function looksLikeCredential(value: string, tight: boolean, next: string | undefined): boolean {
  if (value.length === 0 || next === '(' || placeholderValue.test(value) || /^[$%{<[]/.test(value))
    return false;
  if (tight) return true;
  if (value.length >= 6 && /[0-9]/.test(value) && /[A-Za-z]/.test(value)) return true;
  return value.length >= 16 && /^[A-Za-z0-9+/=_-]+$/.test(value);
}

/**
 * The value assigned at `separator` (a `:` or `=` after a credential name) as [start, end), or
 * undefined when what follows is not a credential. `semicolon` is where the `;` before the name is,
 * -1 without one (see propertyValue).
 */
function assignedValue(
  text: string,
  separator: number,
  spacedBefore: boolean,
  semicolon: number,
): [number, number] | undefined {
  let start = separator + 1;
  while (text[start] === ' ' || text[start] === '\t') start += 1;
  // A value quoted as code or a shell quotes it (`password='ab;c=d' dbname=x`,
  // `connect(password="…", …)`) is no connection string's first property: one is only when `;` and a
  // property follow its closing quote.
  const quotedClose = semicolon < 0 && isQuote(text[start]) ? closingQuote(text, start) : -1;
  const afterQuoted = text[quotedClose + 1];
  const quotedAlone =
    quotedClose > start + 1 &&
    (afterQuoted === undefined ||
      /[\s,)\]}]/.test(afterQuoted) ||
      (afterQuoted === ';' && !propertyAt(text, quotedClose + 2)));
  if (semicolon >= 0 || (!quotedAlone && startsConnectionString(text, separator, start))) {
    const value = propertyValue(text, separator, start, spacedBefore, semicolon);
    if (value !== 'assignment') return value;
  }
  if (isQuote(text[start])) {
    const close = closingQuote(text, start);
    if (close < 0 || close === start + 1 || text.slice(start + 1, close) === REDACTED) return undefined;
    return [start + 1, close];
  }
  const tight = text[separator] === '=' && !spacedBefore && start === separator + 1;
  const scheme = authorizationSchemes.exec(text.slice(start, start + 16));
  if (scheme !== null) start += scheme[0].length;
  // What looksLikeCredential refuses by its first character, refused before reading on: each
  // `password=%…` of a long line read 8192 characters for nothing.
  if (/^[$%{<[]/.test(text.slice(start, start + 1))) return undefined;
  const end = unquotedEnd(text, start);
  const value = text.slice(start, end);
  if (scheme !== null && value.length < 4) return undefined;
  return looksLikeCredential(value, tight || scheme !== null, text[end]) ? [start, end] : undefined;
}

/**
 * Replaces the values of credential assignments in text (`api_key=…`, `"password": "…"`,
 * `token: …`). Finds each `:` and `=` with `indexOf` and looks at the name before it in code: cheaper
 * than an expression for credential words, and without a lookbehind.
 */
function redactAssignments(text: string): string {
  let result = '';
  let copied = 0;
  let from = 0;
  let colon = text.indexOf(':');
  let equals = text.indexOf('=');
  for (;;) {
    if (colon >= 0 && colon < from) colon = text.indexOf(':', from);
    if (equals >= 0 && equals < from) equals = text.indexOf('=', from);
    const separator = colon < 0 ? equals : equals < 0 ? colon : Math.min(colon, equals);
    if (separator < 0) break;
    from = separator + 1;
    const before = text[separator - 1];
    const after = text[separator + 1];
    // `==`, `!=`, `=>`, `::` and `scheme://` are code and addresses, not assignments — except a
    // connection string's property after its `;`, whose value may start with any of them
    // (`;Password==3ORIA>?;`), checked below.
    const codeAfter = after === '=' || after === '>' || after === ':' || after === '/';
    if (codeAfter && text[separator] !== '=') continue;
    if (before === '=' || before === '!' || before === '<' || before === '>' || before === ':') continue;
    let nameEnd = separator;
    while (text[nameEnd - 1] === ' ' || text[nameEnd - 1] === '\t') nameEnd -= 1;
    const spacedBefore = nameEnd !== separator;
    if (codeAfter && spacedBefore) continue;
    if (isQuote(text[nameEnd - 1])) nameEnd -= 1;
    if (!credentialNameEndsAt(text, nameEnd)) continue;
    // A connection string's property, after its `;` and maybe a space (`Server=db; Password=…`).
    let beforeName = nameStart(text, nameEnd) - 1;
    while (text[beforeName] === ' ' || text[beforeName] === '\t') beforeName -= 1;
    const semicolon = text[beforeName] === ';' && !isQuote(text[nameEnd]) ? beforeName : -1;
    if (codeAfter && semicolon < 0) continue;
    const value = assignedValue(text, separator, spacedBefore, semicolon);
    if (value === undefined) continue;
    result += text.slice(copied, value[0]) + REDACTED;
    copied = value[1];
    from = value[1];
  }
  nextClosingBrace.forget();
  nextLineBreak.forget();
  return copied === 0 ? text : result + text.slice(copied);
}

/**
 * Replaces every credential in `text` with `[REDACTED]`: the exact values of credentials read from the
 * environment or configuration (and those registered with `registerSecretValue` or `addRedaction`),
 * substrings shaped like known API keys, URL passwords, the values of credential assignments
 * (`api_key=…`, `Authorization: Bearer …`, `{"password": "…"}`) and matches of user patterns.
 */
export function redactSecretsInText(text: string): string {
  if (text.length < 8) return text;
  const registry = redactionRegistry();
  // Identifiers and timestamps: only a registered value can be in them (see `isInertText`).
  if (registry.patterns.length === 0 && registry.names.size === 0 && isInertText(text))
    return redactSecretValues(text, REDACTED);
  if (cacheGeneration !== registry.generation) {
    recentTexts.clear();
    olderTexts.clear();
    recentCharacters = 0;
    cacheGeneration = registry.generation;
  }
  const known = cachedResult(text);
  if (known !== undefined) return known;
  const result = scanText(text);
  if (text.length <= cachedTextMaximumLength) remember(text, result);
  return result;
}

// A run checkpoints the same strings again and again (a flow's state, the conversation of the task
// in progress, completed outputs held by several entities, and the short ones of every snapshot: a
// crew's process, a status, an id, a path): each is scanned once and its result looked up after
// that, by content (V8 keeps a string's hash once computed, so a lookup of the same string is a
// pointer comparison). Short strings too: a flow's checkpoint met about forty of them, each scanned
// again every time (all the patterns, about as long as for 2 KB of prose), when they were left out.
// Bounded by characters held, each entry counted with an overhead so that short strings cannot make
// it hold too many; emptied when what is redacted changes. Two generations: when the recent one holds
// half the budget it becomes the older one and the older one is dropped, and a text found in the older
// one moves back to the recent one. Evicting the oldest entry one at a time instead made each insertion
// of a full cache walk past the holes left at the front of the map, slower with every one.
const cachedTextMaximumLength = 1 << 20;
const cacheCharacterBudget = 16 << 20;
const cacheEntryOverhead = 64;
let recentTexts = new Map<string, string>();
let olderTexts = new Map<string, string>();
let recentCharacters = 0;
let cacheGeneration = -1;

function cachedResult(text: string): string | undefined {
  const recent = recentTexts.get(text);
  if (recent !== undefined) return recent;
  const older = olderTexts.get(text);
  if (older !== undefined) remember(text, older);
  return older;
}

function remember(text: string, result: string): void {
  if (recentCharacters >= cacheCharacterBudget / 2) {
    olderTexts = recentTexts;
    recentTexts = new Map();
    recentCharacters = 0;
  }
  recentTexts.set(text, result);
  recentCharacters += text.length + cacheEntryOverhead;
}

/** Every rule applied to `text`, without the cache (exported for tests). */
export function scanText(text: string): string {
  // Values first: a pattern that matched part of one would leave the rest behind.
  let result = redactSecretValues(text, REDACTED);
  result = replaceShapes(replaceShapes(result, shapesStartingLowerCase), shapesStartingUpperCase);
  if (result.includes('-----BEGIN')) result = result.replace(privateKey, REDACTED);
  if (result.includes('://')) result = result.replace(urlPassword, `$1${REDACTED}@`);
  if (result.includes(':oracle:')) result = result.replace(oraclePassword, replaceOraclePassword);
  result = redactAssignments(result);
  for (const pattern of redactionRegistry().patterns) result = result.replace(pattern, REDACTED);
  return result;
}
