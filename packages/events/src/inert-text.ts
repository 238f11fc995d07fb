// Characters of identifiers, digests and timestamps (UUIDs, hex ids, ISO dates) out of which no
// built-in redaction rule can make a match: every key shape needs a letter beyond a-f (`sk-`, `ghp_`,
// `xox`, `hf_`, `npm_`, `eyJ`, `AKIA`, `AIza`, `Bearer`), a private key `-----BEGIN`, a URL password
// `/`, and an assignment a credential name before its `:` or `=`, whose every ending (`token`, `key`,
// `secret`, `auth`, `password`...) has such a letter too. Names and patterns users add can be made of
// anything: the caller takes the whole scan when any is registered.
const inertCharacters = new Uint8Array(128);
for (const character of '0123456789abcdefABCDEFTZ-.:+') inertCharacters[character.charCodeAt(0)] = 1;

/** Longer texts are prose or data that is seldom all inert characters: the loop would be lost. */
export const INERT_TEXT_MAXIMUM_LENGTH = 64;

/**
 * True for a string of at most {@link INERT_TEXT_MAXIMUM_LENGTH} characters, each a digit, a hex
 * letter, `T`, `Z`, `-`, `.`, `:` or `+`: an id, a digest or a timestamp, in which only a registered
 * credential value can hide. A run's events each bring new ones (an event id, a timestamp, a call id)
 * that never come back: checking their characters is several times cheaper than looking them up in
 * the cache of scanned texts (hashing a new string), scanning them and inserting them, and they no
 * longer fill that cache.
 */
export function isInertText(text: string): boolean {
  if (text.length > INERT_TEXT_MAXIMUM_LENGTH) return false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code >= 128 || inertCharacters[code] === 0) return false;
  }
  return true;
}
