import { base64Cores, base64Forms, lowerCaseEscapes, symbolsAfter, symbolsBefore } from './base64-cores.js';
import { registerEnvironmentSecrets } from './environment-credentials.js';
import { hasKeptNames, insideKeptName } from './kept-names.js';
import { decodedView, textPosition } from './percent-decoded-view.js';
import { type RedactionRegistry, redactionRegistry } from './redaction-registry.js';
import { MINIMUM_SECRET_LENGTH } from './secret-shape.js';

// Finding registered values in text is this file's; registering them (secret-registration.ts), the
// environment's credentials (environment-credentials.ts) and the names kept from redaction
// (kept-names.ts) have their own files.

// Finding values: every needle (a value, its URL-encoded form, a base64 core) is at least
// MINIMUM_SECRET_LENGTH (8) characters long, so each occurrence holds, at one of its first five
// offsets, a 4-character gram that starts at a multiple of 5 in the text. Only those positions are
// looked at: one hash and one table load per five characters, whatever the number and the alphabet of
// the values (one alternation of 30 random keys costs several times more: V8 can skip nothing).
const gramLength = 4;
const stride = MINIMUM_SECRET_LENGTH - gramLength + 1;

interface Needle {
  value: string;
  /** Where the gram starts inside the value. */
  offset: number;
  /** For a base64 core, how many base64 symbols before and after it go with it (see base64Cores). */
  before: number;
  after: number;
}

interface ValueIndex {
  generation: number;
  /** Whether a value holds a space, which a form-encoded text writes `+` (see decodedView). */
  spacedValue: boolean;
  /** Gram hashes that some needle has (a cheap first filter before the exact lookup). */
  hashes: Uint8Array;
  needles: Map<string, Needle[]>;
}

let index: ValueIndex | undefined;

// Measured faster than integer-only mixing (Math.imul, FNV): V8 keeps this in float registers. Spread
// well enough that prose hits a needle's hash at under 1% of the positions looked at.
function gramHash(text: string, at: number): number {
  return (
    (((text.charCodeAt(at) * 31 + text.charCodeAt(at + 1)) * 31 + text.charCodeAt(at + 2)) * 31 +
      text.charCodeAt(at + 3)) &
    0xffff
  );
}

/**
 * The needles of the registered values. The base64 ones are derived here from each value, not read
 * from the registry's `encodedValues`: a copy of the package that registered a value first wrote
 * only the forms it knew (and this copy, finding the value known, adds nothing), and how far a core
 * widens depends on the value it comes from.
 */
function currentIndex(registry: RedactionRegistry): ValueIndex {
  if (index?.generation === registry.generation) return index;
  const widths = new Map<string, [before: number, after: number]>();
  const add = (needle: string, before: number, after: number) => {
    const known = widths.get(needle);
    // Two cores of one value can be the same text with other edges (a value of one repeated byte):
    // the wider edges cover both.
    widths.set(
      needle,
      known === undefined ? [before, after] : [Math.max(known[0], before), Math.max(known[1], after)],
    );
  };
  for (const value of registry.values) {
    add(value, 0, 0);
    const lowerCase = lowerCaseEscapes(value);
    if (lowerCase !== value) add(lowerCase, 0, 0);
    for (const { core, before, after } of base64Cores(Buffer.from(value, 'utf8')))
      for (const form of base64Forms(core)) add(form, before, after);
  }
  let spacedValue = false;
  for (const value of registry.values) if (value.includes(' ')) spacedValue = true;
  const hashes = new Uint8Array(0x10000);
  const needles = new Map<string, Needle[]>();
  for (const [value, [before, after]] of widths) {
    for (let offset = 0; offset < stride; offset += 1) {
      hashes[gramHash(value, offset)] = 1;
      const gram = value.slice(offset, offset + gramLength);
      const needle = { value, offset, before, after };
      const list = needles.get(gram);
      if (list === undefined) needles.set(gram, [needle]);
      else list.push(needle);
    }
  }
  index = { generation: registry.generation, spacedValue, hashes, needles };
  return index;
}

/** Where each registered needle occurs in `text`, widened by the base64 symbols it leaves out. */
function occurrences(text: string, { hashes, needles }: ValueIndex): [start: number, end: number][] {
  const found: [start: number, end: number][] = [];
  for (let at = 0; at <= text.length - gramLength; at += stride) {
    if (hashes[gramHash(text, at)] === 0) continue;
    const candidates = needles.get(text.slice(at, at + gramLength));
    if (candidates === undefined) continue;
    for (const { value, offset, before, after } of candidates) {
      const start = at - offset;
      if (start < 0 || !text.startsWith(value, start)) continue;
      found.push([symbolsBefore(text, start, before), symbolsAfter(text, start + value.length, after)]);
    }
  }
  return found;
}

/** `text` with every registered credential value (and encoded form) replaced by `replacement`. */
export function redactSecretValues(text: string, replacement: string): string {
  const registry = redactionRegistry();
  if (!registry.environmentRead) registerEnvironmentSecrets();
  if (registry.values.size === 0 || text.length < MINIMUM_SECRET_LENGTH) return text;
  const valueIndex = currentIndex(registry);
  let found = occurrences(text, valueIndex);
  // Escaped text is read decoded too, the occurrences found in it mapped back to the escapes they
  // start and end at.
  const decoded = decodedView(text, valueIndex.spacedValue);
  if (decoded !== undefined)
    for (const [start, end] of occurrences(decoded.view, valueIndex))
      found.push([textPosition(decoded, start), textPosition(decoded, end)]);
  if (found.length === 0) return text;
  if (hasKeptNames()) {
    found = found.filter(([start, end]) => !insideKeptName(text, start, end));
    if (found.length === 0) return text;
  }
  found.sort((left, right) => left[0] - right[0]);
  let result = '';
  let copied = 0;
  for (let item = 0; item < found.length; ) {
    const start = found[item]![0];
    let end = found[item]![1];
    // Overlapping occurrences (values sharing characters) become one replacement: nothing of either
    // is left behind.
    for (item += 1; item < found.length && found[item]![0] <= end; item += 1)
      end = Math.max(end, found[item]![1]);
    result += text.slice(copied, start) + replacement;
    copied = end;
  }
  return result + text.slice(copied);
}
