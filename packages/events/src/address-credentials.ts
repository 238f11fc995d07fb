// What the address of a server (a URL, a JDBC address) says: the passwords written in it, the values
// they are known by, and the words of its structure (scheme, user, database). Split from
// secret-values.ts; environment-credentials.ts reads the environment's addresses with it.

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
export function isAddress(value: string): boolean {
  return urlStart.test(value) || oracleStart.test(value);
}

/** The passwords an address holds, as written in it (see `passwordValues`); none for other values. */
export function passwordsOfAddress(value: string): string[] {
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
export function passwordValues(written: string): string[] {
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

/**
 * The words of a URL's structure: its scheme, its user name and its database name (first path segment,
 * or SQL Server's `;user=…;databaseName=…` properties), lower-cased; for Oracle's JDBC address, `oracle`
 * and its user; none when `value` is not an address.
 */
export function structureWordsOfUrl(value: string): string[] {
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
