/** The longest common prefix of `texts` (empty for no texts). */
export function commonPrefix(texts: readonly string[]): string {
  if (texts.length === 0) return '';
  let prefix = texts[0]!;
  for (const text of texts.slice(1)) {
    let length = 0;
    const limit = Math.min(prefix.length, text.length);
    while (length < limit && prefix.charCodeAt(length) === text.charCodeAt(length)) length += 1;
    prefix = prefix.slice(0, length);
    if (prefix.length === 0) break;
  }
  // Never end between the two halves of a surrogate pair.
  const lastCode = prefix.charCodeAt(prefix.length - 1);
  return lastCode >= 0xd800 && lastCode <= 0xdbff ? prefix.slice(0, -1) : prefix;
}

/** Default minimum length (characters) for a shared prefix to be worth its own cache entry. */
export const MINIMUM_SHARED_PREFIX = 1024;

/**
 * Length of the prefix shared by every prompt when it is at least `minimum` characters (and at least
 * two prompts are given), else `0`. Pass it as `splitAt` to `systemPromptFor`.
 */
export function sharedPrefixLength(texts: readonly string[], minimum = MINIMUM_SHARED_PREFIX): number {
  if (texts.length < 2) return 0;
  const length = commonPrefix(texts).length;
  return length >= minimum ? length : 0;
}
