// Redaction of credentials in text: every rule in order (scanText), behind a cache of texts already
// scanned (redactSecretsInText). The rules are in credential-shapes.ts, credential-assignments.ts,
// connection-string-values.ts and connection-string-properties.ts.
import { redactAssignments } from './credential-assignments.js';
import { redactShapes } from './credential-shapes.js';
import { isInertText } from './inert-text.js';
import { REDACTED } from './redacted.js';
import { redactionRegistry } from './redaction-registry.js';
import { redactSecretValues } from './secret-values.js';

// The marker is public (index.ts, tests): it stays exported from here.
export { REDACTED };

/**
 * Replaces every credential in `text` with `[REDACTED]`: the exact values of credentials read from the
 * environment or configuration (and those registered with `registerSecretValue` or `addRedaction`),
 * substrings shaped like known API keys, URL passwords, the values of credential assignments
 * (`api_key=…`, `Authorization: Bearer …`, `{"password": "…"}`) and matches of user patterns.
 */
export function redactSecretsInText(text: string): string {
  if (text.length < 8) return text;
  const registry = redactionRegistry();
  // Identifiers and timestamps: only a registered value can be in them (see `isInertText`).
  if (registry.patterns.length === 0 && registry.names.size === 0 && isInertText(text))
    return redactSecretValues(text, REDACTED);
  if (cacheGeneration !== registry.generation) {
    recentTexts.clear();
    olderTexts.clear();
    recentCharacters = 0;
    cacheGeneration = registry.generation;
  }
  const known = cachedResult(text);
  if (known !== undefined) return known;
  const result = scanText(text);
  if (text.length <= cachedTextMaximumLength) remember(text, result);
  return result;
}

// A run checkpoints the same strings again and again (a flow's state, the conversation of the task
// in progress, completed outputs held by several entities, and the short ones of every snapshot: a
// crew's process, a status, an id, a path): each is scanned once and its result looked up after
// that, by content (V8 keeps a string's hash once computed, so a lookup of the same string is a
// pointer comparison). Short strings too: a flow's checkpoint met about forty of them, each scanned
// again every time (all the patterns, about as long as for 2 KB of prose), when they were left out.
// Bounded by characters held, each entry counted with an overhead so that short strings cannot make
// it hold too many; emptied when what is redacted changes. Two generations: when the recent one holds
// half the budget it becomes the older one and the older one is dropped, and a text found in the older
// one moves back to the recent one. Evicting the oldest entry one at a time instead made each insertion
// of a full cache walk past the holes left at the front of the map, slower with every one.
const cachedTextMaximumLength = 1 << 20;

const cacheCharacterBudget = 16 << 20;

const cacheEntryOverhead = 64;

let recentTexts = new Map<string, string>();

let olderTexts = new Map<string, string>();

let recentCharacters = 0;

let cacheGeneration = -1;

function cachedResult(text: string): string | undefined {
  const recent = recentTexts.get(text);
  if (recent !== undefined) return recent;
  const older = olderTexts.get(text);
  if (older !== undefined) remember(text, older);
  return older;
}

function remember(text: string, result: string): void {
  if (recentCharacters >= cacheCharacterBudget / 2) {
    olderTexts = recentTexts;
    recentTexts = new Map();
    recentCharacters = 0;
  }
  recentTexts.set(text, result);
  recentCharacters += text.length + cacheEntryOverhead;
}

/** Every rule applied to `text`, without the cache (exported for tests). */
export function scanText(text: string): string {
  // Values first: a pattern that matched part of one would leave the rest behind.
  let result = redactShapes(redactSecretValues(text, REDACTED));
  result = redactAssignments(result);
  for (const pattern of redactionRegistry().patterns) result = result.replace(pattern, REDACTED);
  return result;
}
