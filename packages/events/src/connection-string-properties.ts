// Where a `;`-separated connection string's properties are: a `name=value` pair starting at a
// position, or one before a `;` (split out of connection-string-values.ts, which reads their values).
import { isNameCharacter, isSpace } from './text-characters.js';

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
export function propertyBefore(text: string, semicolon: number): boolean {
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
export function propertyAt(text: string, at: number, unclosed = false): boolean {
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
