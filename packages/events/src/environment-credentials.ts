// The credentials among environment variables, and their registration. Split from secret-values.ts,
// which registers them the first time it redacts a text.
import { isAddress, passwordsOfAddress, passwordValues, structureWordsOfUrl } from './address-credentials.js';
import { redactionRegistry } from './redaction-registry.js';
import { isCredentialVariable } from './secret-names.js';
import { registerSecretValues, reportUnregisteredCredential } from './secret-registration.js';
import { MINIMUM_SECRET_LENGTH, secretShapeRefusal } from './secret-shape.js';

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
    else reportUnregisteredCredential(`environment variable ${name}`, refusal);
  }
}
