import { postgresError } from './errors.js';

/** Schema used when neither the location (`?schema=`) nor the provider's options name one. */
export const DEFAULT_SCHEMA = 'crewline';

const schemePattern = /^postgres(?:ql)?:\/\//i;

/**
 * Query parameters that carry credentials: taken out of every location, remembered in memory only.
 * The worker hides the same ones from the queue location it prints (through `./internal`).
 */
export const credentialParameters: readonly string[] = ['password', 'sslpassword'];

/**
 * What a password looks like once something redacted it (crewline's own redaction writes
 * `[REDACTED]`): never taken for the password itself.
 */
const redactedPasswords = new Set(['[REDACTED]', '%5BREDACTED%5D', '***', '*****', 'REDACTED']);

/** A schema name the provider can quote safely: letters, digits and `_`, not starting with a digit. */
const schemaPattern = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Credentials found in locations, by server (the redacted URL without `schema`). Module-wide, so a
 * `postgres-url#id` reference listed by one provider instance can be read by another in the same
 * process; never written anywhere.
 */
const credentials = new Map<string, Map<string, string>>();

/**
 * The silence limit a location gave its server (`?query_timeout_ms=`, see `queryTimeoutMs`), by
 * server: the location's wins over the provider's option. Module-wide like {@link credentials}, so
 * a location the CLI or the worker was given carries it to every provider that reaches that server.
 */
const queryTimeouts = new Map<string, number>();

/** Most `?query_timeout_ms=` accepts: a day, like the `queryTimeoutMs` option. */
const maxQueryTimeoutMs = 86_400_000;

/** True when `text` looks like a Postgres connection string. */
export function isPostgresUrl(text: unknown): text is string {
  return typeof text === 'string' && schemePattern.test(text);
}

/** A parsed, redacted location. */
export interface PostgresLocation {
  /**
   * The canonical location: the URL without credentials and `query_timeout_ms`, with `schema` as its
   * last parameter.
   */
  location: string;
  /** The same URL without `schema`: one pool per server, database and user. */
  server: string;
  schema: string;
}

export function checkSchemaName(schema: unknown, where: string): string {
  if (typeof schema !== 'string' || !schemaPattern.test(schema)) {
    throw postgresError(
      'invalid_config',
      `${where} ${JSON.stringify(schema)} is not a schema name this provider accepts; use 1 to 63 letters, digits and "_", not starting with a digit`,
    );
  }
  return schema;
}

function invalidUrl(reason: string): never {
  throw postgresError(
    'invalid_config',
    `Postgres location is not a usable connection string (${reason}); pass postgres://user@host:5432/database, optionally with ?schema=name`,
  );
}

/**
 * Canonical, redacted form of a Postgres location. The password (in the user info or a `password`
 * parameter) is removed and remembered in memory for connecting; `schema` comes from the URL, else
 * `defaultSchema`, and is written back as the last parameter so that every reference names its schema.
 * `query_timeout_ms` is removed too, and remembered for the server (see {@link queryTimeoutOf}).
 */
export function parseLocation(input: string, defaultSchema: string): PostgresLocation {
  if (!isPostgresUrl(input)) invalidUrl('it does not start with postgres:// or postgresql://');
  if (input.includes('\0') || /[\r\n]/.test(input)) invalidUrl('it contains a control character');
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    // The message of URL's error quotes the input, password included: never pass it on.
    return invalidUrl('it does not parse as a URL');
  }
  if (url.hash !== '') invalidUrl('it has a "#" part; references are location#id, not locations');
  const found = new Map<string, string>();
  if (url.password !== '') {
    const password = decodeURIComponent(url.password);
    if (!redactedPasswords.has(password) && !redactedPasswords.has(url.password))
      found.set('password', password);
    url.password = '';
  }
  for (const name of credentialParameters) {
    const value = url.searchParams.get(name);
    if (value !== null && !redactedPasswords.has(value)) found.set(name, value);
    url.searchParams.delete(name);
  }
  const schema = checkSchemaName(url.searchParams.get('schema') ?? defaultSchema, 'schema');
  url.searchParams.delete('schema');
  // A setting of this process, not part of the store's name: two locations that differ only in it
  // are the same store.
  const queryTimeout = url.searchParams.get('query_timeout_ms');
  url.searchParams.delete('query_timeout_ms');
  const queryTimeoutMs = queryTimeout === null ? undefined : checkQueryTimeout(queryTimeout);
  url.protocol = url.protocol.toLowerCase();
  const server = url.href;
  url.searchParams.append('schema', schema);
  const location = url.href;
  if (found.size > 0) credentials.set(server, found);
  if (queryTimeoutMs !== undefined) queryTimeouts.set(server, queryTimeoutMs);
  return { location, server, schema };
}

function checkQueryTimeout(text: string): number {
  const value = Number(text);
  if (!/^[0-9]+$/.test(text) || value < 1 || value > maxQueryTimeoutMs) {
    throw postgresError(
      'invalid_config',
      `query_timeout_ms=${JSON.stringify(text)} in the Postgres location is not a whole number of milliseconds from 1 to ${maxQueryTimeoutMs}`,
    );
  }
  return value;
}

/**
 * The silence limit a location gave `server` (`?query_timeout_ms=`); undefined when none did (the
 * provider's `queryTimeoutMs` counts then).
 */
export function queryTimeoutOf(server: string): number | undefined {
  return queryTimeouts.get(server);
}

/** Credentials remembered for a server (see {@link parseLocation}); empty when none were given. */
export function credentialsOf(server: string): ReadonlyMap<string, string> {
  return credentials.get(server) ?? new Map();
}

/**
 * Splits `postgres-url#id` into location and id; a URL without `#` means its latest checkpoint.
 * Undefined for what is not a Postgres URL.
 */
export function parseReference(
  reference: string,
  defaultSchema: string,
): { location: string; id?: string } | undefined {
  if (!isPostgresUrl(reference)) return undefined;
  const hash = reference.lastIndexOf('#');
  const location = parseLocation(hash >= 0 ? reference.slice(0, hash) : reference, defaultSchema).location;
  const id = hash >= 0 ? reference.slice(hash + 1) : '';
  return id === '' ? { location } : { location, id };
}
