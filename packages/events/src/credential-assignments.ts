// Credential assignments (`api_key=…`, `token: …`, `Authorization: Bearer …`, `{"password": "…"}`):
// a credential name before `:` or `=`, and the value after it when it looks like one (split out of
// secret-patterns.ts).
import { propertyAt } from './connection-string-properties.js';
import { forgetSearchedText, propertyValue, startsConnectionString } from './connection-string-values.js';
import { REDACTED } from './redacted.js';
import { isSecretKey } from './secret-names.js';
import {
  closingEscapedQuote,
  closingQuote,
  escapedQuoteWidth,
  isQuote,
  nameStart,
  unquotedEnd,
} from './text-characters.js';
import { placeholderValue } from './value-templates.js';

const authorizationSchemes = /^(?:Bearer|Basic|Token|Digest|Bot)[ \t]+/i;

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

/**
 * A value after `name =` or `name:` that is a credential, not code or prose. Tight `name=value`
 * (queries, environment files) always is, unless it is a call; spaced or `:` forms (YAML, headers,
 * code, prose such as "token: the unit of text") only when the value looks random: letters with
 * digits, or a long run of token characters.
 */
function looksLikeCredential(value: string, tight: boolean, next: string | undefined): boolean {
  if (value.length === 0 || next === '(' || placeholderValue.test(value)) return false;
  if (tight) return true;
  if (value.length >= 6 && /[0-9]/.test(value) && /[A-Za-z]/.test(value)) return true;
  return value.length >= 16 && /^[A-Za-z0-9+/=_-]+$/.test(value);
}

/**
 * Where the quote of `width` opening at `start` closes (see closingQuote, closingEscapedQuote); -1
 * without one or for no quote (0).
 */
function closingQuoteOfWidth(text: string, start: number, width: number): number {
  if (width === 0) return -1;
  return width === 1 ? closingQuote(text, start) : closingEscapedQuote(text, start, width);
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
  // The quote the value opens with: `"`, `'` or a backtick (1), or one JSON text held in a JSON string
  // escapes (`{\"password\":\"…\"}`, `\\\"` a level deeper; see escapedQuoteWidth).
  const quote = isQuote(text[start]) ? 1 : escapedQuoteWidth(text, start);
  // A value quoted as code or a shell quotes it (`password='ab;c=d' dbname=x`,
  // `connect(password="…", …)`, `\"…\"` in JSON text) is no connection string's first property: one is
  // only when `;` and a property follow its closing quote.
  const quotedClose = semicolon < 0 ? closingQuoteOfWidth(text, start, quote) : -1;
  const afterQuoted = text[quotedClose + quote];
  const quotedAlone =
    quotedClose > start + quote &&
    (afterQuoted === undefined ||
      /[\s,)\]}]/.test(afterQuoted) ||
      (afterQuoted === ';' && !propertyAt(text, quotedClose + quote + 1)));
  if (semicolon >= 0 || (!quotedAlone && startsConnectionString(text, separator, start))) {
    const value = propertyValue(text, separator, start, spacedBefore, semicolon);
    if (value !== 'assignment') return value;
  }
  if (quote > 0) {
    const close = semicolon < 0 ? quotedClose : closingQuoteOfWidth(text, start, quote);
    const inside = text.slice(start + quote, close);
    if (close < 0 || inside === '' || inside === REDACTED) return undefined;
    return [start + quote, close];
  }
  const tight = text[separator] === '=' && !spacedBefore && start === separator + 1;
  const scheme = authorizationSchemes.exec(text.slice(start, start + 16));
  if (scheme !== null) start += scheme[0].length;
  // A value starting as a template or markup does (`${…}`, `$VAR`, `%s`, `{0}`, `<password>`,
  // `[password]`) is taken for one and left: refused by its first character here, before reading on
  // (each `password=%…` of a long line read 8192 characters for nothing), and only here.
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
export function redactAssignments(text: string): string {
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
    const quotedName = isQuote(text[nameEnd - 1]);
    if (quotedName) nameEnd -= 1;
    // A key of JSON text held in a JSON string (`{\"password\":…}`, `\\\"` a level deeper).
    let backslashes = 0;
    while (quotedName && backslashes < 64 && text[nameEnd - backslashes - 1] === '\\') backslashes += 1;
    if (backslashes > 0 && escapedQuoteWidth(text, nameEnd - backslashes) > 0) nameEnd -= backslashes;
    if (!credentialNameEndsAt(text, nameEnd)) continue;
    // A connection string's property, after its `;` and maybe a space (`Server=db; Password=…`).
    let beforeName = nameStart(text, nameEnd) - 1;
    while (text[beforeName] === ' ' || text[beforeName] === '\t') beforeName -= 1;
    const semicolon = text[beforeName] === ';' && !quotedName ? beforeName : -1;
    if (codeAfter && semicolon < 0) continue;
    const value = assignedValue(text, separator, spacedBefore, semicolon);
    if (value === undefined) continue;
    result += text.slice(copied, value[0]) + REDACTED;
    copied = value[1];
    from = value[1];
  }
  forgetSearchedText();
  return copied === 0 ? text : result + text.slice(copied);
}
