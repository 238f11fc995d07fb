// The base64 forms of a registered value: the cores every encoding of it includes, the spellings they
// are written in, and how far a core found in a text widens to take the symbols holding the rest of the
// value's bits. Split from secret-values.ts, which finds them in text.

/** A base64 core of a value, and how many base64 symbols on each side of it hold bits of the value. */
export interface Base64Core {
  /** Standard alphabet; see `base64Forms` for the others. */
  core: string;
  /** 0, 2 or 3: the symbols before the core that mix the value's first bytes with the bytes before. */
  before: number;
  /** 0, 2 or 3: the symbols after it that hold its last bytes (padding follows when they end the text). */
  after: number;
}

// The symbols holding the bytes a core leaves out, by how many they are: one byte takes two symbols
// (6 + 2 of its bits), two bytes take three (6 + 6 + 4).
const symbolsForBytes = [0, 2, 3] as const;

/**
 * The base64 text that every base64 encoding containing `bytes` includes, whatever the byte offset
 * at which `bytes` starts (HTTP Basic credentials put a password after `user:`): for each of the three
 * offsets, the encoded groups made of `bytes` alone. A core holds all but the symbols that mix the
 * first or last bytes with their neighbours; where one is found, exactly those symbols go with it (see
 * `redactSecretValues`), and the text around them stays: a path, an identifier, a JSON escape.
 */
export function base64Cores(bytes: Buffer): Base64Core[] {
  const cores: Base64Core[] = [];
  for (let skip = 0; skip < 3; skip += 1) {
    const rest = bytes.subarray(skip);
    const whole = rest.length - (rest.length % 3);
    // Below 6 bytes (8 characters) a core would be too short to be a safe needle.
    if (whole < 6) continue;
    cores.push({
      core: rest.subarray(0, whole).toString('base64'),
      // Skipping one byte means the value starts at the last byte of a group: two symbols hold bits
      // of it; skipping two, three.
      before: symbolsForBytes[skip]!,
      after: symbolsForBytes[rest.length % 3]!,
    });
  }
  return cores;
}

/**
 * A standard base64 core as every form writes it: standard, URL-safe (JWT payloads, URL parameters),
 * URL-encoded (`+` and `/` in a query, `%2b` in lower case as .NET writes it).
 */
export function base64Forms(core: string): string[] {
  const forms = [core];
  const urlSafe = core.replaceAll('+', '-').replaceAll('/', '_');
  if (urlSafe !== core) forms.push(urlSafe);
  const encoded = encodeURIComponent(core);
  if (encoded !== core) forms.push(encoded, lowerCaseEscapes(encoded));
  return forms;
}

/** `text` with its percent escapes in lower case (`%2F` as `%2f`). */
export function lowerCaseEscapes(text: string): string {
  return text.replace(/%[0-9A-F]{2}/g, (percentEscape) => percentEscape.toLowerCase());
}

/** A character of base64 text, in either alphabet (`+/` standard, `-_` URL-safe). */
function isBase64Character(code: number): boolean {
  return (
    (code >= 97 && code <= 122) || // a-z
    (code >= 65 && code <= 90) || // A-Z
    (code >= 48 && code <= 57) || // 0-9
    code === 43 || // +
    code === 47 || // /
    code === 45 || // -
    code === 95 // _
  );
}

/** The base64 symbol URL-encoded at `at`: `+` for `%2B`, `/` for `%2F`, `=` for `%3D`; else undefined. */
function encodedBase64Symbol(text: string, at: number): string | undefined {
  if (text.charCodeAt(at) !== 37) return undefined;
  const pair = text.slice(at + 1, at + 3).toUpperCase();
  return pair === '2B' ? '+' : pair === '2F' ? '/' : pair === '3D' ? '=' : undefined;
}

function isEncodedDataSymbol(text: string, at: number): boolean {
  const symbol = encodedBase64Symbol(text, at);
  return symbol === '+' || symbol === '/';
}

// A core is widened by the symbols that hold the rest of the value's bits, and no further: the whole
// run of base64 characters around it took a path (`/blobs/…`), an identifier (`key_…_expires`) or the
// letter of a JSON escape (`\n…`) with it, and redacting it once per occurrence was quadratic.

/** Where the `count` base64 symbols before `start` start (a URL-encoded `%2B` is one symbol). */
export function symbolsBefore(text: string, start: number, count: number): number {
  for (let taken = 0; taken < count; taken += 1) {
    if (start >= 3 && isEncodedDataSymbol(text, start - 3)) start -= 3;
    else if (start > 0 && isBase64Character(text.charCodeAt(start - 1))) start -= 1;
    else break;
  }
  return start;
}

/**
 * Where the `count` base64 symbols after `end` end, with the padding when they end the encoding (`==`
 * after two, `=` after three): it tells nothing of the value, and keeps the replacement whole.
 */
export function symbolsAfter(text: string, end: number, count: number): number {
  for (let taken = 0; taken < count; taken += 1) {
    if (isEncodedDataSymbol(text, end)) end += 3;
    else if (end < text.length && isBase64Character(text.charCodeAt(end))) end += 1;
    else return end;
  }
  for (let padding = count === 2 ? 2 : count === 3 ? 1 : 0; padding > 0; padding -= 1) {
    if (text.charCodeAt(end) === 61) end += 1;
    else if (encodedBase64Symbol(text, end) === '=') end += 3;
    else break;
  }
  return end;
}
