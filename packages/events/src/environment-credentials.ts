// The credentials among environment variables and the passwords of addresses among other values
// (kickoff inputs), and their registration. Split from secret-values.ts, which registers the
// environment's the first time it redacts a text.
import { isAddress, passwordsOfAddress, passwordValues, structureWordsOfUrl } from './address-credentials.js';
import { REDACTED } from './redacted.js';
import { redactionRegistry } from './redaction-registry.js';
import { isCredentialVariable } from './secret-names.js';
import { registerSecretValues, reportUnregisteredCredential } from './secret-registration.js';
import { commonPasswordRefusal, MINIMUM_SECRET_LENGTH, secretShapeRefusal } from './secret-shape.js';

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

/**
 * Why a credential is not redacted by value although its shape would be: it is one of `structureWords`
 * (see structureWordsOf), for which `refusal` says so. A placeholder or a short value is named for its
 * shape instead (registerSecretValues tells it).
 */
function structureRefusalOf(
  structureWords: ReadonlySet<string>,
  refusal: string,
): (value: string) => string | undefined {
  return (value) =>
    structureWords.has(value.trim().toLowerCase()) && secretShapeRefusal(value.trim()) === undefined
      ? refusal
      : undefined;
}

/**
 * The passwords written in `value` when it is an address (see passwordsOfAddress), each by every value
 * it is known by (passwordValues), with the refusal `refusalOf` gives its value as the server reads it.
 * A password already redacted (`postgres://app:[REDACTED]@db/app`, an input restored from a
 * checkpoint) is no credential.
 */
function addressPasswords(
  value: string,
  refusalOf: (value: string) => string | undefined,
): { value: string; refusal: string | undefined }[] {
  const credentials: { value: string; refusal: string | undefined }[] = [];
  for (const password of passwordsOfAddress(value)) {
    const values = passwordValues(password);
    const read = values[values.length - 1]!;
    if (read === REDACTED) continue;
    // A dictionary word inside an address is a default left in place, and a word of text (review RF-1).
    const refusal = refusalOf(read) ?? commonPasswordRefusal(read);
    for (const each of values) credentials.push({ value: each, refusal });
  }
  return credentials;
}

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
  const refusalOf = structureRefusalOf(structureWordsOf(environment), structureRefusal);
  for (const [name, value] of Object.entries(environment)) {
    if (value === undefined || value.length < MINIMUM_SECRET_LENGTH) continue;
    const passwords = addressPasswords(value, refusalOf);
    for (const password of passwords) credentials.push({ name, ...password });
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

const addressStructureRefusal = 'it is a user name, database name or scheme of an address given with it';

/**
 * Registers, by the rules {@link registerEnvironmentSecrets} reads the environment's addresses with,
 * the passwords written in those of `values` that are the address of a server (a URL or JDBC address:
 * `postgres://app:…@db/app`, `…?password=…`, `jdbc:oracle:thin:app/…@db:1521/svc`; see
 * `passwordsOfAddress`), whatever they are named: the runtime registers those of kickoff inputs, so
 * that a password quoted bare (a model's answer, a tool's result) is redacted as it is inside its
 * address. Left out, and named once in a `debug` log line with the value's source: a password of a
 * shape {@link registerSecretValues} refuses (under 8 characters, a placeholder), one equal to a user
 * name, database name or scheme that any of these addresses shows
 * (`postgres://analytics:analytics@db/analytics`), and one already `[REDACTED]`. Other values are
 * ignored. `source` names where a value comes from, never the value: `kickoff input "db"`.
 */
export function registerAddressPasswords(values: Iterable<{ source: string; value: string }>): void {
  const addresses = [...values].filter(
    ({ value }) => value.length >= MINIMUM_SECRET_LENGTH && isAddress(value),
  );
  if (addresses.length === 0) return;
  const structureWords = new Set(addresses.flatMap(({ value }) => structureWordsOfUrl(value)));
  const refusalOf = structureRefusalOf(structureWords, addressStructureRefusal);
  for (const { source, value } of addresses) {
    for (const password of addressPasswords(value, refusalOf)) {
      if (password.refusal === undefined) registerSecretValues([password.value], source);
      else reportUnregisteredCredential(source, password.refusal);
    }
  }
}
