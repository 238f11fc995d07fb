import { processSlot } from './process-slot.js';
import { type RedactionRegistry, redactionRegistry } from './redaction-registry.js';
import { isCredentialVariable } from './secret-names.js';
import { MINIMUM_SECRET_LENGTH, secretShapeRefusal } from './secret-shape.js';

export { MINIMUM_SECRET_LENGTH } from './secret-shape.js';

/** Told once per source of a credential value that is not redacted by value (see the logger). */
export type UnregisteredCredentialReporter = (source: string, reason: string) => void;

let reporter: UnregisteredCredentialReporter | undefined;
const reportedSources = new Set<string>();

/**
 * Sets who is told of a credential not redacted by value. The logger sets it when it loads (it cannot
 * be imported here: it redacts what it writes, with this module).
 */
export function reportUnregisteredCredentialsTo(next: UnregisteredCredentialReporter): void {
  reporter = next;
}

function refused(source: string | undefined, reason: string): void {
  if (source === undefined || reportedSources.has(source)) return;
  reportedSources.add(source);
  reporter?.(source, reason);
}

/** A base64 core of a value, and how many base64 symbols on each side of it hold bits of the value. */
interface Base64Core {
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
function base64Cores(bytes: Buffer): Base64Core[] {
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
function base64Forms(core: string): string[] {
  const forms = [core];
  const urlSafe = core.replaceAll('+', '-').replaceAll('/', '_');
  if (urlSafe !== core) forms.push(urlSafe);
  const encoded = encodeURIComponent(core);
  if (encoded !== core) forms.push(encoded, lowerCaseEscapes(encoded));
  return forms;
}

/** `text` with its percent escapes in lower case (`%2F` as `%2f`). */
function lowerCaseEscapes(text: string): string {
  return text.replace(/%[0-9A-F]{2}/g, (percentEscape) => percentEscape.toLowerCase());
}

function addValue(registry: RedactionRegistry, value: string): boolean {
  if (registry.values.has(value)) return false;
  registry.values.add(value);
  const encoded = encodeURIComponent(value);
  if (encoded !== value) registry.values.add(encoded);
  // This copy derives its needles from `values` when it builds its index (currentIndex); the cores
  // are written for the copies of the package that read them instead.
  for (const { core } of base64Cores(Buffer.from(value, 'utf8')))
    for (const form of base64Forms(core)) registry.encodedValues.add(form);
  return true;
}

/** Registers values (already checked); true when one was new. */
export function addSecretValues(values: Iterable<string>): boolean {
  const registry = redactionRegistry();
  let added = false;
  for (const value of values) if (addValue(registry, value)) added = true;
  if (added) registry.generation += 1;
  return added;
}

/**
 * Adds credential values to the process-wide registry: from then on every string crewline writes
 * (checkpoints, events, logs, error messages) has them, their URL-encoded and their base64 forms,
 * replaced by `[REDACTED]`. Values `secretShapeRefusal` refuses are ignored: shorter than
 * {@link MINIMUM_SECRET_LENGTH}, booleans, numbers, documented placeholder keys (`lm-studio`,
 * `sk-no-key-required`: `PLACEHOLDER_KEYS`) and fillers (`sk-xxxxxxxx`); `undefined`, `null` and `''` too,
 * so a credential setting can be passed as read. `source` names where the values come from (never the
 * value: `environment variable PGPASSWORD`); a value ignored for its shape is then logged once at
 * debug level with that name and why. To redact a value whatever its shape, use `addRedaction`.
 */
export function registerSecretValues(values: Iterable<string | null | undefined>, source?: string): void {
  const accepted: string[] = [];
  for (const value of values) {
    if (typeof value !== 'string' || value.trim() === '') continue;
    const trimmed = value.trim();
    const refusal = secretShapeRefusal(trimmed);
    if (refusal !== undefined) {
      refused(source, refusal);
      continue;
    }
    accepted.push(trimmed);
    if (trimmed !== value) accepted.push(value);
  }
  addSecretValues(accepted);
}

/** One value; see {@link registerSecretValues}. */
export function registerSecretValue(value: string | null | undefined, source?: string): void {
  registerSecretValues([value], source);
}

// A URL, `jdbc:` ones included (`jdbc:postgresql://db/app`, `jdbc:mysql://user:…@db/app`,
// `jdbc:sqlserver://db:1433;…`, with a driver before the scheme: `jdbc:jtds:sqlserver://…`).
const jdbcPrefix = /^jdbc:(?:[a-z][a-z0-9]*:(?!\/\/))*/i;
const urlStart = /^(?:jdbc:(?:[a-z][a-z0-9]*:(?!\/\/))*)?[a-z][a-z0-9+.-]*:\/\//i;
// The password of its user information, of its query (`?password=…`, the form the worker README
// gives for CREWLINE_WORKER_LOCATION and JDBC drivers read), or of its `;`-separated properties (SQL
// Server's `jdbc:sqlserver://db:1433;user=app;password=…`, braced when it holds a `;`: `{…}`, with
// `}}` for a `}`).
const userInfoPassword =
  /^(?:jdbc:(?:[a-z][a-z0-9]*:(?!\/\/))*)?[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:([^\s/@]+)@/i;
const queryPassword = /[?&](?:password|passwd|pwd)=([^&#\s]+)/i;
const queryUser = /[?&](?:user|username)=([^&#;\s]+)/i;
const propertyPassword = /;\s*(?:password|passwd|pwd)\s*=\s*(\{(?:[^}]|\}\})*\}|[^;]*)/i;
const propertyStructure = /;\s*(?:user|username|user ?id|uid|database|databaseName)\s*=\s*([^;{]*)/gi;
// Oracle's own form, with no `//` after the scheme: `jdbc:oracle:thin:scott/…@db:1521/ORCL` (or
// `@//db:1521/service`); a password holding `@` or `/` is quoted (`scott/"p@ss"@db`).
const oracleStart = /^jdbc:oracle:[a-z0-9]+:/i;
const oracleCredentials = /^jdbc:oracle:[a-z0-9]+:([^\s/@:"]+)\/("[^"]*"|[^\s@"]+)@/i;

/** Whether `value` is the address of a server: a URL, or an Oracle JDBC address. */
function isAddress(value: string): boolean {
  return urlStart.test(value) || oracleStart.test(value);
}

/** The passwords an address holds, as written in it (see `passwordValues`); none for other values. */
function passwordsOfAddress(value: string): string[] {
  if (oracleStart.test(value)) {
    const password = oracleCredentials.exec(value)?.[2];
    return password === undefined ? [] : [password];
  }
  if (!urlStart.test(value)) return [];
  return [
    userInfoPassword.exec(value)?.[1],
    queryPassword.exec(value)?.[1],
    propertyPassword.exec(value)?.[1],
  ].filter((password): password is string => password !== undefined && password !== '');
}

/**
 * The values a password written in an address is known by: as written, and as the server reads it
 * (URL-decoded; a braced or quoted one without its braces or quotes, a braced `}}` as `}`).
 */
function passwordValues(written: string): string[] {
  if (written.startsWith('{') && written.endsWith('}')) {
    const inner = written.slice(1, -1);
    return [inner, inner.replaceAll('}}', '}')];
  }
  if (written.length >= 2 && written.startsWith('"') && written.endsWith('"')) return [written.slice(1, -1)];
  return [written, decoded(written)];
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

// One per process, like the registry: a copy of the package that registered a model must keep it
// from the redaction of every other copy.
const keptTexts = processSlot<Set<string>>('crewline.redaction.kept-texts.v1', () => new Set());

/**
 * Names that redaction by value never rewrites: an occurrence of a registered value that lies inside
 * an occurrence of one of them is left as it is (elsewhere the value is still redacted). The runtime
 * gives the provider names and model ids it stores, so that a credential value they happen to hold
 * (a key `qwen2-7b` of a model `qwen2-7b-instruct`) cannot turn a stored model into
 * `[REDACTED]-instruct`, which no registered provider serves: the checkpoint could not be restored.
 * Names shorter than {@link MINIMUM_SECRET_LENGTH} can hold no registered value and are not kept.
 */
export function keepNamesFromValueRedaction(names: Iterable<string>): void {
  let added = false;
  for (const name of names) {
    if (typeof name !== 'string' || name.length < MINIMUM_SECRET_LENGTH || keptTexts.has(name)) continue;
    keptTexts.add(name);
    added = true;
  }
  // Texts redacted before (cached, or settled by a run) are scanned again under the new rule.
  if (added) redactionRegistry().generation += 1;
}

/**
 * Whether the text from `start` to `end` lies inside an occurrence of a kept name longer than it: a
 * model id `lmstudio:qwen` keeps a key `lmstudio` from rewriting it. A kept name that is the value
 * itself protects nothing (a placeholder key equal to its provider's name is left out where it is
 * registered: PLACEHOLDER_KEYS, the runtime's provider rule).
 */
function insideKeptName(text: string, start: number, end: number): boolean {
  for (const name of keptTexts) {
    // Strictly longer: a name that IS the value (a key given as a model id) protects nothing, or the
    // key would be left unredacted everywhere it appears (review of d49b438).
    if (name.length <= end - start) continue;
    for (
      let at = text.indexOf(name, Math.max(0, end - name.length));
      at !== -1 && at <= start;
      at = text.indexOf(name, at + 1)
    )
      if (at + name.length >= end) return true;
  }
  return false;
}

/**
 * The words of a URL's structure: its scheme, its user name and its database name (first path segment,
 * or SQL Server's `;user=…;databaseName=…` properties), lower-cased; for Oracle's JDBC address, `oracle`
 * and its user; none when `value` is not an address.
 */
function structureWordsOfUrl(value: string): string[] {
  if (oracleStart.test(value)) {
    const user = oracleCredentials.exec(value)?.[1];
    return user === undefined ? ['oracle'] : ['oracle', user.toLowerCase()];
  }
  if (!urlStart.test(value)) return [];
  const address = value.replace(jdbcPrefix, '');
  const words = [address.slice(0, address.indexOf(':'))];
  // The user and path of any other address may be the secret itself: a token as the user of a git
  // remote (`https://<token>@github.com/…`), a webhook's token as its first path segment. They are a
  // role and a database only in a database's address, or beside a password of their own.
  const hasPassword = passwordsOfAddress(value).length > 0;
  if (!hasPassword && !databaseScheme.test(words[0]!)) return words.map((word) => word.toLowerCase());
  const user = queryUser.exec(address)?.[1];
  if (user !== undefined) words.push(decoded(user));
  for (const property of address.matchAll(propertyStructure)) words.push(property[1]!.trim());
  try {
    const url = new URL(address);
    words.push(decoded(url.username), decoded(url.pathname.split('/')[1] ?? ''));
  } catch {
    // An address the URL parser refuses still has its scheme and query user.
  }
  return words.filter((word) => word !== '').map((word) => word.toLowerCase());
}

/** Schemes of database servers, whose addresses name a role and a database (see structureWordsOfUrl). */
const databaseScheme =
  /^(?:postgres|postgresql|mysql|mariadb|mssql|sqlserver|oracle|mongodb|mongodb\+srv|redis|rediss|clickhouse|cockroachdb)$/i;

// Variables that name a user or a database, not a credential (libpq's and the shell's).
const structureVariables = ['PGUSER', 'PGDATABASE'];

/**
 * The user names, database names and URL schemes an environment shows: those of `PGUSER`, `PGDATABASE`
 * and of its URLs (see structureWordsOfUrl; not `USER`/`LOGNAME`, which a token may equal). A credential equal to one of them
 * (`PGPASSWORD=app` with `PGUSER=app`, `postgres://postgres:postgres@…/postgres`) protects nothing that
 * the environment does not already show; redacted by value, it would rewrite every occurrence of the
 * word, URLs and provider names included. It is still redacted under its name, in its URL and in
 * credential assignments.
 */
function structureWordsOf(environment: Readonly<Record<string, string | undefined>>): Set<string> {
  const words = new Set<string>();
  for (const name of structureVariables) {
    const value = environment[name]?.trim();
    if (value) words.add(value.toLowerCase());
  }
  for (const value of Object.values(environment))
    if (value !== undefined) for (const word of structureWordsOfUrl(value)) words.add(word);
  return words;
}

const structureRefusal = 'it is a user name, database name or scheme of the environment (PGUSER, a URL…)';

/** A credential found in the environment: the variable it is in, and the value. */
interface EnvironmentCredential {
  name: string;
  value: string;
  /** Why it is not redacted by value, whatever its shape. */
  refusal?: string | undefined;
}

function environmentCredentials(
  environment: Readonly<Record<string, string | undefined>>,
): EnvironmentCredential[] {
  const credentials: EnvironmentCredential[] = [];
  const structureWords = structureWordsOf(environment);
  // A placeholder or a short value is named for its shape (registerSecretValues tells it).
  const refusalOf = (value: string) =>
    structureWords.has(value.trim().toLowerCase()) && secretShapeRefusal(value.trim()) === undefined
      ? structureRefusal
      : undefined;
  for (const [name, value] of Object.entries(environment)) {
    if (value === undefined || value.length < MINIMUM_SECRET_LENGTH) continue;
    const passwords = passwordsOfAddress(value);
    for (const password of passwords) {
      const values = passwordValues(password);
      const refusal = refusalOf(values[values.length - 1]!);
      for (const each of values) credentials.push({ name, value: each, refusal });
    }
    if (!isCredentialVariable(name)) continue;
    // An address under a credential name (`AUTH_URL`) is an address; its password was taken above. A
    // DSN is the credential itself.
    if (passwords.length === 0 && isAddress(value) && !/dsn[0-9]*$/i.test(name)) continue;
    credentials.push({ name, value, refusal: refusalOf(value) });
  }
  return credentials;
}

/**
 * The credentials among environment variables: the whole value of a variable whose name says it is
 * a credential (`OPENAI_API_KEY`, `GITHUB_TOKEN`, `PGPASSWORD`, `SENTRY_DSN`...), and the password of
 * any value that is a URL or JDBC address with one (`DATABASE_URL=postgres://app:…@db/app`,
 * `…/app?password=…`, `jdbc:postgresql://db/app?user=app&password=…`, `jdbc:mysql://app:…@db/app`,
 * `jdbc:sqlserver://db:1433;user=app;password=…`, `jdbc:oracle:thin:app/…@db:1521/svc`), unless the credential
 * is a user name, database name or scheme the environment shows (`PGUSER`, `PGDATABASE`, those of a
 * database's URL or of a URL with a password, any URL's scheme). Of their shape nothing is checked here:
 * {@link registerSecretValues} leaves placeholders out.
 */
export function credentialsOfEnvironment(
  environment: Readonly<Record<string, string | undefined>>,
): string[] {
  return environmentCredentials(environment)
    .filter((credential) => credential.refusal === undefined)
    .map((credential) => credential.value);
}

/**
 * Registers the credentials of an environment (default `process.env`; see
 * {@link credentialsOfEnvironment} and {@link registerSecretValues}): a credential equal to a user
 * name, database name or scheme the environment shows (`PGPASSWORD=app` with `PGUSER=app`,
 * `DATABASE_URL=postgres://postgres:postgres@…/postgres`) is not redacted by value, as it would rewrite
 * every occurrence of the word stored; credential-named keys and
 * `PGPASSWORD=…` assignments are redacted whatever their value. A value left out is named (never
 * shown) once in a `debug` log line. `process.env` is read once, the first time a string is redacted;
 * call this again after setting a credential in `process.env` later, or to register the credentials of
 * another map of variables your code reads.
 */
export function registerEnvironmentSecrets(
  environment: Readonly<Record<string, string | undefined>> = process.env,
): void {
  if (environment === process.env) redactionRegistry().environmentRead = true;
  for (const { name, value, refusal } of environmentCredentials(environment)) {
    if (refusal === undefined) registerSecretValues([value], `environment variable ${name}`);
    else refused(`environment variable ${name}`, refusal);
  }
}

// Finding values: every needle (a value, its URL-encoded form, a base64 core) is at least
// MINIMUM_SECRET_LENGTH (8) characters long, so each occurrence holds, at one of its first five
// offsets, a 4-character gram that starts at a multiple of 5 in the text. Only those positions are
// looked at: one hash and one table load per five characters, whatever the number and the alphabet of
// the values (one alternation of 30 random keys costs several times more: V8 can skip nothing).
const gramLength = 4;
const stride = MINIMUM_SECRET_LENGTH - gramLength + 1;

interface Needle {
  value: string;
  /** Where the gram starts inside the value. */
  offset: number;
  /** For a base64 core, how many base64 symbols before and after it go with it (see base64Cores). */
  before: number;
  after: number;
}

interface ValueIndex {
  generation: number;
  /** Whether a value holds a space, which a form-encoded text writes `+` (see decodedView). */
  spacedValue: boolean;
  /** Gram hashes that some needle has (a cheap first filter before the exact lookup). */
  hashes: Uint8Array;
  needles: Map<string, Needle[]>;
}

let index: ValueIndex | undefined;

// Measured faster than integer-only mixing (Math.imul, FNV): V8 keeps this in float registers. Spread
// well enough that prose hits a needle's hash at under 1% of the positions looked at.
function gramHash(text: string, at: number): number {
  return (
    (((text.charCodeAt(at) * 31 + text.charCodeAt(at + 1)) * 31 + text.charCodeAt(at + 2)) * 31 +
      text.charCodeAt(at + 3)) &
    0xffff
  );
}

/**
 * The needles of the registered values. The base64 ones are derived here from each value, not read
 * from the registry's `encodedValues`: a copy of the package that registered a value first wrote
 * only the forms it knew (and this copy, finding the value known, adds nothing), and how far a core
 * widens depends on the value it comes from.
 */
function currentIndex(registry: RedactionRegistry): ValueIndex {
  if (index?.generation === registry.generation) return index;
  const widths = new Map<string, [before: number, after: number]>();
  const add = (needle: string, before: number, after: number) => {
    const known = widths.get(needle);
    // Two cores of one value can be the same text with other edges (a value of one repeated byte):
    // the wider edges cover both.
    widths.set(
      needle,
      known === undefined ? [before, after] : [Math.max(known[0], before), Math.max(known[1], after)],
    );
  };
  for (const value of registry.values) {
    add(value, 0, 0);
    const lowerCase = lowerCaseEscapes(value);
    if (lowerCase !== value) add(lowerCase, 0, 0);
    for (const { core, before, after } of base64Cores(Buffer.from(value, 'utf8')))
      for (const form of base64Forms(core)) add(form, before, after);
  }
  let spacedValue = false;
  for (const value of registry.values) if (value.includes(' ')) spacedValue = true;
  const hashes = new Uint8Array(0x10000);
  const needles = new Map<string, Needle[]>();
  for (const [value, [before, after]] of widths) {
    for (let offset = 0; offset < stride; offset += 1) {
      hashes[gramHash(value, offset)] = 1;
      const gram = value.slice(offset, offset + gramLength);
      const needle = { value, offset, before, after };
      const list = needles.get(gram);
      if (list === undefined) needles.set(gram, [needle]);
      else list.push(needle);
    }
  }
  index = { generation: registry.generation, spacedValue, hashes, needles };
  return index;
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
function symbolsBefore(text: string, start: number, count: number): number {
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
function symbolsAfter(text: string, end: number, count: number): number {
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

/** Where each registered needle occurs in `text`, widened by the base64 symbols it leaves out. */
function occurrences(text: string, { hashes, needles }: ValueIndex): [start: number, end: number][] {
  const found: [start: number, end: number][] = [];
  for (let at = 0; at <= text.length - gramLength; at += stride) {
    if (hashes[gramHash(text, at)] === 0) continue;
    const candidates = needles.get(text.slice(at, at + gramLength));
    if (candidates === undefined) continue;
    for (const { value, offset, before, after } of candidates) {
      const start = at - offset;
      if (start < 0 || !text.startsWith(value, start)) continue;
      found.push([symbolsBefore(text, start, before), symbolsAfter(text, start + value.length, after)]);
    }
  }
  return found;
}

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
interface DecodedView {
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
function decodedView(text: string, plusAsSpace: boolean): DecodedView | undefined {
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
function textPosition(decoded: DecodedView, position: number): number {
  let low = 0;
  let high = decoded.decodedAt.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (decoded.decodedAt[middle]! < position) low = middle + 1;
    else high = middle;
  }
  return low === 0 ? position : position + decoded.shortAfter[low - 1]!;
}

/** `text` with every registered credential value (and encoded form) replaced by `replacement`. */
export function redactSecretValues(text: string, replacement: string): string {
  const registry = redactionRegistry();
  if (!registry.environmentRead) registerEnvironmentSecrets();
  if (registry.values.size === 0 || text.length < MINIMUM_SECRET_LENGTH) return text;
  const valueIndex = currentIndex(registry);
  let found = occurrences(text, valueIndex);
  // Escaped text is read decoded too, the occurrences found in it mapped back to the escapes they
  // start and end at.
  const decoded = decodedView(text, valueIndex.spacedValue);
  if (decoded !== undefined)
    for (const [start, end] of occurrences(decoded.view, valueIndex))
      found.push([textPosition(decoded, start), textPosition(decoded, end)]);
  if (found.length === 0) return text;
  if (keptTexts.size > 0) {
    found = found.filter(([start, end]) => !insideKeptName(text, start, end));
    if (found.length === 0) return text;
  }
  found.sort((left, right) => left[0] - right[0]);
  let result = '';
  let copied = 0;
  for (let item = 0; item < found.length; ) {
    const start = found[item]![0];
    let end = found[item]![1];
    // Overlapping occurrences (values sharing characters) become one replacement: nothing of either
    // is left behind.
    for (item += 1; item < found.length && found[item]![0] <= end; item += 1)
      end = Math.max(end, found[item]![1]);
    result += text.slice(copied, start) + replacement;
    copied = end;
  }
  return result + text.slice(copied);
}
