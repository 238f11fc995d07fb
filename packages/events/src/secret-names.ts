import { redactionRegistry } from './redaction-registry.js';

/**
 * Endings of a normalized name (lower case, separators and trailing digits removed) that say its
 * value is a credential. Names are compared by their ending because the last words name what a value
 * is: `client_secret` is a secret, `secretName` is a name.
 */
const credentialEndings = [
  'password',
  'passwd',
  'passphrase',
  'passcode',
  'pwd',
  'secret',
  'secrets',
  'token',
  'credential',
  'credentials',
  'auth',
  'authorization',
  'bearer',
  'cookie',
  'sessionid',
  'dsn',
  'connectionstring',
  'connstring',
  'connectionstr',
  'connstr',
];

/**
 * Words that make a following `key`/`keys` a credential (`apiKey`, `masterKey`,
 * `Ocp-Apim-Subscription-Key`). Alone, a key is usually a map key, a sort key or a React key.
 */
const keyQualifiers = [
  'api',
  'access',
  'secret',
  'private',
  'subscription',
  'account',
  'master',
  'signing',
  'encryption',
  'decryption',
  'session',
  'auth',
  'client',
  'license',
  'licence',
  'webhook',
  'service',
  'admin',
  'app',
  'developer',
  'ssh',
  'deploy',
  'root',
  'hmac',
  'jwt',
  'sas',
  'shared',
  'restricted',
];

/**
 * Words before `tokens` that make it a count (`maxTokens`, `cachedInputTokens`), not a list of
 * credentials (`tokens`, `apiTokens`).
 */
const tokenCounterWords = [
  'max',
  'min',
  'input',
  'output',
  'total',
  'prompt',
  'completion',
  'cached',
  'cache',
  'read',
  'write',
  'reasoning',
  'used',
  'remaining',
  'num',
  'number',
  'count',
  'limit',
  'budget',
  'context',
  'text',
  'audio',
  'image',
  'prediction',
  'generated',
  'reserved',
  'estimated',
  'billed',
];

const keyEndings = keyQualifiers.flatMap((word) => [`${word}key`, `${word}keys`]);

/** A name in lower case, without separators and trailing digits: `API-Key_2` → `apikey`. */
export function normalizeName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .replace(/[0-9]+$/, '');
}

function endsWithAny(name: string, endings: readonly string[]): boolean {
  for (const ending of endings) if (name.endsWith(ending)) return true;
  return false;
}

function isCredentialName(normalized: string): boolean {
  let name = normalized;
  // `accessKeyId`, `private_key_id`: the id of a key pair travels with its secret half.
  if (/keys?ids?$/.test(name)) name = name.replace(/ids?$/, '');
  if (name === 'tokens') return true;
  if (name.endsWith('tokens')) return !endsWithAny(name.slice(0, -'tokens'.length), tokenCounterWords);
  if (endsWithAny(name, credentialEndings) || endsWithAny(name, keyEndings)) return true;
  for (const added of redactionRegistry().names) if (name.endsWith(added)) return true;
  return false;
}

// Object keys repeat endlessly across snapshots ("role", "content", "status"...): the answer is worth
// remembering. Bounded so that odd keys cannot grow it forever; emptied when users add names.
const answers = new Map<string, boolean>();
let answersGeneration = -1;

/**
 * True when a property or variable name says its value is a credential, matched by its parts
 * whatever the case and separators: `apiKey`, `OPENAI_API_KEY`, `x-api-key`, `Ocp-Apim-Subscription-Key`,
 * `secretAccessKey`, `accessKeyId`, `client_secret`, `connectionString`, `tokens`. Counters and other
 * names that only mention a credential word are not: `maxTokens`, `inputTokens`, `tokenCount`,
 * `primaryKey`, `keyword`, `author`. Names added with `addRedaction` count too.
 */
export function isSecretKey(name: string): boolean {
  const generation = redactionRegistry().generation;
  if (generation !== answersGeneration) {
    answers.clear();
    answersGeneration = generation;
  }
  let answer = answers.get(name);
  if (answer === undefined) {
    answer = isCredentialName(normalizeName(name));
    if (answers.size >= 10_000) answers.clear();
    answers.set(name, answer);
  }
  return answer;
}

// The shell's working directories: their names end in "pwd", their values are paths.
const workingDirectoryVariables = new Set(['PWD', 'OLDPWD']);

/**
 * True when an environment variable holds a credential: a name {@link isSecretKey} accepts, or one
 * whose last part is KEY, KEYS, TOKEN(S) or AUTH (in an environment nearly always a credential:
 * `STRIPE_KEY`, `NPM_AUTH`).
 */
export function isCredentialVariable(name: string): boolean {
  if (workingDirectoryVariables.has(name)) return false;
  if (isSecretKey(name)) return true;
  return /(?:^|[^A-Za-z0-9])(?:keys?|tokens?|auth)[0-9]*$/i.test(name);
}
