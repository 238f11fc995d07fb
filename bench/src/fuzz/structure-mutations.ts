// Hostile values inside an otherwise well-formed checkpoint: a wrong type, a huge value, a key that
// names a prototype, a control character. Half the time the place is chosen near the top (envelope,
// metadata, entity headers, inputs), where the schema decides; else anywhere in the document.
import { checkpointText, type Placeholder, placeholder } from './checkpoint-text.js';
import type { JsonMutation } from './json-mutation.js';
import { describePath, type JsonPath, objectPathsOf, pathsOf, replaceAt, valueAt } from './json-paths.js';
import { integerBelow, pick, type Random } from './random-tools.js';

function parsed(text: string): Record<string, unknown> {
  return JSON.parse(text) as Record<string, unknown>;
}

/** A random path: half the time at most `shallow` keys deep. */
function randomPath(random: Random, paths: readonly JsonPath[], shallow = 3): JsonPath {
  const near = paths.filter((path) => path.length <= shallow);
  return pick(random, random() < 0.5 && near.length > 0 ? near : paths);
}

const typeSamples: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  2 ** 53 + 1,
  '',
  'text',
  [],
  [null],
  {},
  { x: 1 },
];

function typeOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

/** A value of another type at a random path. */
export const wrongTypes: JsonMutation = {
  name: 'wrong-types',
  description: 'a value of another type (null, boolean, number, string, array, object) at a random path',
  mutate(seed, random) {
    const document = parsed(seed.text);
    const path = randomPath(random, pathsOf(document));
    const current = typeOf(valueAt(document, path));
    const value = pick(
      random,
      typeSamples.filter((sample) => typeOf(sample) !== current),
    );
    replaceAt(document, path, value);
    return { content: checkpointText(document), detail: `${describePath(path)} = ${JSON.stringify(value)}` };
  },
};

/** Raw JSON text of a huge value: a long string, a long array or deep nesting. */
function hugeValue(random: Random): { text: string; what: string } {
  const kind = pick(random, ['string', 'array', 'nesting'] as const);
  if (kind === 'string') {
    const length = pick(random, [100_000, 1_000_000, 8_000_000]);
    return { text: JSON.stringify('x'.repeat(length)), what: `a string of ${length} characters` };
  }
  if (kind === 'array') {
    // Past a few hundred thousand elements every read spends seconds validating, which is a cost,
    // not a different path through the readers.
    const length = pick(random, [10_000, 50_000, 200_000]);
    const element = pick(random, ['0', 'null', '{}', '"x"']);
    return {
      text: `[${new Array(length).fill(element).join(',')}]`,
      what: `an array of ${length} × ${element}`,
    };
  }
  // Around 1,500–2,500 levels the JSON reviver still copes but a recursive validator may not.
  const depth = pick(random, [500, 1_000, 1_500, 2_000, 2_500, 10_000, 100_000]);
  const [open, close] = random() < 0.5 ? ['[', ']'] : ['{"a":', '}'];
  return { text: `${open.repeat(depth)}0${close.repeat(depth)}`, what: `${depth} levels of ${open}` };
}

/** A huge string, array or nesting at a random path. */
export const hugeValues: JsonMutation = {
  name: 'huge-values',
  description:
    'a string of up to 8 M characters, an array of up to 200,000 elements or nesting 500 to 100,000 deep at a random path',
  mutate(seed, random) {
    const document = parsed(seed.text);
    const path = randomPath(random, pathsOf(document));
    const huge = hugeValue(random);
    const slot = placeholder(huge.text);
    replaceAt(document, path, slot.marker);
    return { content: checkpointText(document, [slot]), detail: `${describePath(path)} = ${huge.what}` };
  },
};

const prototypeKeys = ['__proto__', 'constructor', 'prototype'];
const pollutingValues = [
  '{"crewlineFuzzPolluted":"yes"}',
  '{"prototype":{"crewlineFuzzPolluted":"yes"}}',
  '{"__proto__":{"crewlineFuzzPolluted":"yes"}}',
  '{"constructor":{"prototype":{"crewlineFuzzPolluted":"yes"}}}',
  '"yes"',
  'null',
];

/**
 * A `__proto__`, `constructor` or `prototype` key added to a random object (half the time under
 * `inputs` or an entity's data, which restore merges into live objects), sometimes spelled with a
 * JSON escape (`"\u005f_proto__"`) that parses to the same key.
 */
export const prototypeKeyMutation: JsonMutation = {
  name: 'prototype-keys',
  description:
    '`__proto__`/`constructor`/`prototype` keys (some JSON-escaped) with polluting values in a random object',
  mutate(seed, random) {
    const document = parsed(seed.text);
    const objects = objectPathsOf(document);
    const merged = objects.filter(
      (path) => (path[0] === 'inputs' || (path[0] === 'entities' && path[2] === 'data')) && path.length <= 6,
    );
    const path = pick(random, random() < 0.5 && merged.length > 0 ? merged : objects);
    const key = pick(random, prototypeKeys);
    const escaped = key === '__proto__' && random() < 0.3;
    const value = pick(random, pollutingValues);
    const slots: Placeholder[] = [];
    const keySlot = placeholder(escaped ? '"\\u005f_proto__"' : JSON.stringify(key));
    const valueSlot = placeholder(value);
    slots.push(keySlot, valueSlot);
    const target = valueAt(document, path) as Record<string, unknown>;
    target[keySlot.marker] = valueSlot.marker;
    return {
      content: checkpointText(document, slots),
      detail: `${describePath(path)}[${escaped ? '"\\u005f_proto__"' : key}] = ${value}`,
    };
  },
};

const controlCharacters = ['\u0000', '\n', '\r\n', '\u2028', '\u001b[2J', '\ud800', '\t', '\u202e', '\u0007'];
const metadataStrings: JsonPath[] = [
  ['metadata', 'id'],
  ['metadata', 'branch'],
  ['metadata', 'lineageId'],
  ['metadata', 'trigger'],
  ['metadata', 'createdAt'],
  ['entities', 0, 'name'],
  ['entities', 0, 'id'],
];

/** A NUL, newline, terminal escape or lone surrogate inserted into a string (or a key). */
export const controlCharacterMutation: JsonMutation = {
  name: 'control-characters',
  description: 'NUL, newlines, U+2028, terminal escapes, lone surrogates inserted into a string value or key',
  mutate(seed, random) {
    const document = parsed(seed.text);
    const character = pick(random, controlCharacters);
    const insert = (text: string) => {
      const at = integerBelow(random, text.length + 1);
      return `${text.slice(0, at)}${character}${text.slice(at)}`;
    };
    const strings = pathsOf(document).filter((path) => typeof valueAt(document, path) === 'string');
    const path = random() < 0.4 ? pick(random, metadataStrings) : pick(random, strings);
    const current = valueAt(document, path);
    if (typeof current === 'string' && random() < 0.8) {
      replaceAt(document, path, insert(current));
      return {
        content: checkpointText(document),
        detail: `${describePath(path)} += ${JSON.stringify(character)}`,
      };
    }
    // A key instead: rename the last key of the path's parent object.
    const parentPath = path.slice(0, -1);
    const parent = valueAt(document, parentPath);
    const key = path.at(-1);
    if (typeof parent !== 'object' || parent === null || Array.isArray(parent) || typeof key !== 'string') {
      return { content: checkpointText(document), detail: 'no string at the chosen path; unchanged' };
    }
    const record = parent as Record<string, unknown>;
    const value = record[key];
    delete record[key];
    const renamed = insert(key);
    record[renamed] = value;
    return {
      content: checkpointText(document),
      detail: `key ${describePath(path)} renamed ${JSON.stringify(renamed)}`,
    };
  },
};
