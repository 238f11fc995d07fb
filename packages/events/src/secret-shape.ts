/**
 * Shortest value redacted by value. Shorter strings are ordinary words and numbers too often
 * (`ollama`, `changeme`), and would blank them out of every text.
 */
export const MINIMUM_SECRET_LENGTH = 8;

// Settings that happen to sit under a credential-like name (`AUTH_ENABLED=true`, `MAX_TOKENS=4096`).
const nonSecretValue = /^(?:true|false|yes|no|on|off|null|none|undefined|[+-]?[0-9]+(?:\.[0-9]+)?)$/i;

// Letters only, in words as prose writes them (`lm-studio`, `not-needed`, `Postgres`, `NOT_USED`):
// each part all lower case, all upper case or capitalized. A random letters-only key mixes cases
// inside its parts (`kQzRtWbX`) and is not one.
const words = /^(?:[a-z]+|[A-Z]+|[A-Z][a-z]+)(?:[-_. ](?:[a-z]+|[A-Z]+|[A-Z][a-z]+))*$/;

/**
 * Words shorter than this are not redacted by value. A short word or phrase (`anything`,
 * `sk-no-key-required`) is a placeholder or an ordinary word that other text holds (a provider
 * name, a model id, a URL scheme, prose); a longer phrase (a passphrase) is met only as itself.
 */
export const MINIMUM_SECRET_PHRASE_LENGTH = 20;

/** Values of fewer distinct characters are fillers (`xxxxxxxx`, `sk-xxxxxxxxxxxx`, `********`). */
const minimumDistinctCharacters = 5;

/**
 * Why a credential value is not redacted by exact value, or `undefined` when it is key-shaped: at
 * least {@link MINIMUM_SECRET_LENGTH} characters, not a boolean or a number, not a word or a phrase
 * of words shorter than {@link MINIMUM_SECRET_PHRASE_LENGTH} characters, and of at least five distinct
 * characters. Every key a provider issues (`sk-proj-…`, `sk-ant-api03-…`, `AIza…`, `gsk_…`, `hf_…`, a
 * JWT) passes; placeholders (`lm-studio`, `anything`, `not-needed`, `sk-no-key-required`,
 * `sk-xxxxxxxx`) and dictionary passwords (`postgres`) do not: redacted by value they would rewrite
 * every stored occurrence of the word, model ids and URLs included.
 */
export function secretShapeRefusal(value: string): string | undefined {
  if (value.length < MINIMUM_SECRET_LENGTH) return `it is shorter than ${MINIMUM_SECRET_LENGTH} characters`;
  if (nonSecretValue.test(value)) return 'it is a boolean or a number';
  if (value.length < MINIMUM_SECRET_PHRASE_LENGTH && words.test(value))
    return `it is a word or a phrase of words shorter than ${MINIMUM_SECRET_PHRASE_LENGTH} characters (a placeholder or a dictionary password)`;
  if (new Set(value).size < minimumDistinctCharacters)
    return `it has fewer than ${minimumDistinctCharacters} distinct characters (a placeholder)`;
  return undefined;
}
