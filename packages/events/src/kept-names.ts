// Names that redaction by value never rewrites (the provider names and model ids a checkpoint stores).
// Split from secret-values.ts, which leaves the occurrences inside them.
import { processSlot } from './process-slot.js';
import { redactionRegistry } from './redaction-registry.js';
import { MINIMUM_SECRET_LENGTH } from './secret-shape.js';

// One per process, like the registry: a copy of the package that registered a model must keep it
// from the redaction of every other copy.
const keptTexts = processSlot<Set<string>>('crewline.redaction.kept-texts.v1', () => new Set());

/**
 * Names that redaction by value never rewrites: an occurrence of a registered value that lies inside
 * an occurrence of one of them is left as it is (elsewhere the value is still redacted). The runtime
 * gives the provider names and model ids it stores, so that a credential value they happen to hold
 * (a key `qwen2-7b` of a model `qwen2-7b-instruct`) cannot turn a stored model into
 * `[REDACTED]-instruct`, which no registered provider serves: the checkpoint could not be restored.
 * Names shorter than {@link MINIMUM_SECRET_LENGTH} can hold no registered value and are not kept.
 */
export function keepNamesFromValueRedaction(names: Iterable<string>): void {
  let added = false;
  for (const name of names) {
    if (typeof name !== 'string' || name.length < MINIMUM_SECRET_LENGTH || keptTexts.has(name)) continue;
    keptTexts.add(name);
    added = true;
  }
  // Texts redacted before (cached, or settled by a run) are scanned again under the new rule.
  if (added) redactionRegistry().generation += 1;
}

/**
 * Whether the text from `start` to `end` lies inside an occurrence of a kept name longer than it: a
 * model id `lmstudio:qwen` keeps a key `lmstudio` from rewriting it. A kept name that is the value
 * itself protects nothing (a placeholder key equal to its provider's name is left out where it is
 * registered: PLACEHOLDER_KEYS, the runtime's provider rule).
 */
export function insideKeptName(text: string, start: number, end: number): boolean {
  const value = text.slice(start, end);
  for (const name of keptTexts) {
    // Strictly longer: a name that IS the value (a key given as a model id) protects nothing, or the
    // key would be left unredacted everywhere it appears (review of d49b438).
    if (name.length <= value.length) continue;
    // Only a name holding the value can cover it, placed where the value sits in it: each offset of
    // the value in the name is one place to look (searching the text for every name cost a scan of
    // the text per name and occurrence: 1.5 s for a 1 MB text and 30 names, review RI-2).
    for (let offset = name.indexOf(value); offset !== -1; offset = name.indexOf(value, offset + 1)) {
      const at = start - offset;
      if (at >= 0 && text.startsWith(name, at)) return true;
    }
  }
  return false;
}

/** Whether any name is kept: without one no occurrence needs looking at again. */
export function hasKeptNames(): boolean {
  return keptTexts.size > 0;
}
