/**
 * Shortest value redacted by value. Shorter strings are ordinary words and numbers too often
 * (`ollama`, `none`), and would blank them out of every text.
 */
export const MINIMUM_SECRET_LENGTH = 8;

// Settings that happen to sit under a credential-like name (`AUTH_ENABLED=true`, `MAX_TOKENS=4096`).
const nonSecretValue = /^(?:true|false|yes|no|on|off|null|none|undefined|[+-]?[0-9]+(?:\.[0-9]+)?)$/i;

/**
 * Keys that local model servers document as placeholders (any value is accepted; the SDK only needs one),
 * and default passwords of local services, compared case-insensitively. Redacted by value, such a word
 * would rewrite every stored occurrence of it (`lm-studio:qwen` became `[REDACTED]:qwen`, which no
 * provider serves). Any other value, letters only or not, is a credential: a Gmail app password
 * (`qwhx kzvb nmtr plsd`) or a base32 TOTP seed is letters only.
 */
export const PLACEHOLDER_KEYS: ReadonlySet<string> = new Set([
  'lm-studio', // LM Studio's OpenAI-compatibility docs: `api_key="lm-studio"`
  'lmstudio', // LM Studio's Anthropic-compatibility docs (`ANTHROPIC_AUTH_TOKEN=lmstudio`), the AI SDK's LM Studio page
  'ollama', // Ollama's OpenAI-compatibility docs: `api_key='ollama'`
  'sk-no-key-required', // llamafile and llama.cpp server READMEs: `api_key = "sk-no-key-required"`
  'empty', // vLLM's OpenAI-compatible server docs: `openai_api_key = "EMPTY"`
  'anything', // LiteLLM proxy docs: `api_key="anything"`
  // Stand-ins met in local servers' examples and issue threads for a key the server ignores.
  'no-key',
  'llama.cpp',
  'llamacpp',
  'not-needed',
  'none',
  'dummy',
  'dummy-key',
  'placeholder',
  'postgres', // GitHub Actions' PostgreSQL service container docs: `POSTGRES_PASSWORD: postgres`
]);

/**
 * Default and dictionary passwords (compared exactly, case aside; see {@link commonPasswordRefusal}):
 * the ones installers, container images and tutorials set and the first ones any password list holds.
 * Found as the password of an address, such a value protects nothing by being kept out of text, and
 * redacted by value it is a word of ordinary text and of names: `db: 'postgres://app:password@…'`
 * rewrote every answer of the process (`Rotate [REDACTED]s`) and a tool `check_password_policy`,
 * which a resume then refused by name (review RF-1 of f6dcd4e). It is still redacted inside its
 * address, under a credential name and in credential assignments. Kept short: only words that are
 * far more often text than secret.
 */
export const COMMON_PASSWORDS: ReadonlySet<string> = new Set([
  'password',
  'passw0rd',
  'p@ssword',
  'p@ssw0rd',
  'passwort',
  'changeme',
  'changeit', // the Java keystore's default
  'welcome',
  'letmein',
  'qwerty',
  'qwertyuiop',
  'asdfgh',
  'asdfghjkl',
  'administrator',
  'admin',
  'root',
  'toor',
  'secret',
  'default',
  'guest',
  'master',
  'iloveyou',
  'trustno',
  'sunshine',
  'monkey',
  'dragon',
  'football',
  'baseball',
  'superman',
  'starwars',
  'princess',
  'abc',
  'test',
  'testing',
  'example',
  'sample',
  'demo',
  'user',
  'mysql',
  'oracle',
  'mongodb',
  'redis',
  'rabbitmq',
  'postgres',
  'postgresql',
]);

/**
 * Why the password of an address is not redacted by value although its shape would be: it is one of
 * the {@link COMMON_PASSWORDS}, exactly (case aside). Only for a password found inside an address
 * (`postgres://app:password@db/app`), which says nothing of how much of a secret it is: a value given
 * under a credential's name, or registered in code, is redacted whatever word it is, and so is a
 * common word with more to it (`Password2024!`, `admin_7Qz`: real credentials look like that, and text
 * rarely does; review RI-1 of b54def8, which refused those everywhere).
 */
export function commonPasswordRefusal(value: string): string | undefined {
  return COMMON_PASSWORDS.has(value.toLowerCase())
    ? 'it is a well-known default or dictionary password'
    : undefined;
}

// What crewline writes in every message (`crewline: …`), component prefix and command hint
// (`pnpm crewline checkpoint …`): redacted by value, it would blank them all out.
const OWN_NAME = 'crewline';

/** Values of fewer distinct characters are fillers (`xxxxxxxx`, `sk-xxxxxxxxxxxx`, `********`). */
const minimumDistinctCharacters = 5;

/**
 * Why a credential value is not redacted by exact value, or `undefined` when it is: a value is redacted
 * when it has at least {@link MINIMUM_SECRET_LENGTH} characters, is not a boolean or a number, is not a
 * documented placeholder key ({@link PLACEHOLDER_KEYS}: `lm-studio`, `not-needed`, `sk-no-key-required`…),
 * has at least five distinct characters (`sk-xxxxxxxx` is a filler) and is
 * not `crewline` (the word every message and command hint of crewline holds). Redacted by value, a
 * placeholder or a common word would rewrite every stored occurrence of it, model ids, tool names and
 * URLs included.
 */
export function secretShapeRefusal(value: string): string | undefined {
  if (value.length < MINIMUM_SECRET_LENGTH) return `it is shorter than ${MINIMUM_SECRET_LENGTH} characters`;
  if (nonSecretValue.test(value)) return 'it is a boolean or a number';
  if (value.toLowerCase() === OWN_NAME)
    return 'it is the word crewline writes in every message, component prefix and command hint';
  if (PLACEHOLDER_KEYS.has(value.toLowerCase())) return 'it is a placeholder key local servers document';
  if (new Set(value).size < minimumDistinctCharacters)
    return `it has fewer than ${minimumDistinctCharacters} distinct characters (a placeholder)`;
  return undefined;
}
