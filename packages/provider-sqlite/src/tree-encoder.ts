import { sqliteError } from './errors.js';

/**
 * The head of a checkpoint (kickoff inputs and entities) is stored as a tree of chunks. Every JSON
 * value whose compact text is at least {@link CHUNK_THRESHOLD_BYTES} long gets a chunk of its own;
 * smaller values are written inline inside their parent's chunk. A chunk of an object or array
 * lists its members, each either a chunk id (a JSON number) or an inline value wrapped in a
 * one-element array:
 *
 *   `n{"status":["done"],"output":42}`   an object node; `output` lives in chunk 42
 *   `n[17,["small"],18]`                 an array node
 *   `v"...long string..."`               a value stored whole (a long string, or a deep subtree)
 *
 * A write compares the new head with the tree it wrote last (kept in memory, or rebuilt from the
 * database) and stores new chunks only for the values that changed and for their ancestors, so a
 * checkpoint after one more event costs a few hundred bytes, not the whole crew again.
 */
export const CHUNK_THRESHOLD_BYTES = 256;

/** Containers nested deeper than this are stored as one value (keeps recursion bounded). */
export const MAX_SPLIT_DEPTH = 32;

/** What kind of JSON value a node holds. */
export const Shape = { primitive: 0, object: 1, array: 2, opaque: 3 } as const;
export type ShapeCode = (typeof Shape)[keyof typeof Shape];

/** One JSON value as encoded, with what a later write needs to reuse it unchanged. */
export interface EncodedNode {
  readonly shape: ShapeCode;
  /** The value of a primitive (compared with `===` to detect a change). */
  readonly value?: string | number | boolean | null;
  /** Own keys of an object, in output order. */
  readonly keys?: readonly string[];
  /** `JSON.stringify(key)` for each key (computed once per changed object). */
  readonly keyTexts?: readonly string[];
  readonly children?: readonly EncodedNode[];
  /** UTF-8 bytes of the value's compact JSON text. */
  readonly bytes: number;
  /**
   * Extra bytes when the value is pretty-printed with 2-space indentation at depth `d`:
   * `indentBase + d * indentPerLevel`. Lets a write know a checkpoint's exact text size without
   * building the text.
   */
  readonly indentBase: number;
  readonly indentPerLevel: number;
  /** Compact JSON text, kept while the value is small enough to be written inline. */
  readonly text?: string;
  /** Whole compact text of an opaque (too deep) value, for comparison. */
  readonly fullText?: string;
  /** Chunk id, when the value is stored as a chunk of its own. */
  readonly ref?: number;
}

/** Stores one chunk body and returns its id. */
export type ChunkSink = (body: string) => number;

export function utf8Length(text: string): number {
  // Pure-ASCII text (the common case for JSON) needs no scan through Buffer.
  return text.length < 64 && isAscii(text) ? text.length : Buffer.byteLength(text, 'utf8');
}

function isAscii(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) if (text.charCodeAt(index) > 0x7f) return false;
  return true;
}

/** What JSON.stringify does to a member before writing it (toJSON, boxed primitives). */
function normalize(value: unknown, key: string): unknown {
  if ((typeof value === 'object' && value !== null) || typeof value === 'bigint') {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') value = (toJSON as (key: string) => unknown).call(value, key);
  }
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return value.valueOf();
  return value;
}

function omitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/**
 * Encodes JSON values into chunks, reusing the nodes of a previous encoding for every value that
 * did not change. `sink` receives the bodies of new chunks; pass one that throws to build nodes
 * without storing anything (all values must then be small).
 */
export class TreeEncoder {
  readonly #sink: ChunkSink;
  readonly #threshold: number;

  constructor(sink: ChunkSink, threshold = CHUNK_THRESHOLD_BYTES) {
    this.#sink = sink;
    this.#threshold = threshold;
  }

  /**
   * Encodes the root object of a head. The root is never a chunk: its body (without the `n`) is
   * returned for the checkpoint row, together with the node to reuse next time.
   */
  encodeRoot(
    value: Record<string, unknown>,
    previous: EncodedNode | undefined,
  ): { node: EncodedNode; body: string } {
    const node = this.#encodeObject(value, previous, 0, true);
    return { node, body: this.#containerBody(node) };
  }

  /** Encodes any JSON value at `depth`. Returns undefined for values JSON leaves out. */
  encode(value: unknown, previous: EncodedNode | undefined, depth: number): EncodedNode | undefined {
    if (omitted(value)) return undefined;
    if (value === null || typeof value !== 'object') return this.#encodePrimitive(value, previous);
    if (depth >= MAX_SPLIT_DEPTH) return this.#encodeOpaque(value, previous);
    if (Array.isArray(value)) return this.#encodeArray(value, previous, depth);
    return this.#encodeObject(value as Record<string, unknown>, previous, depth, false);
  }

  #encodePrimitive(value: unknown, previous: EncodedNode | undefined): EncodedNode {
    if (typeof value === 'bigint') {
      throw sqliteError(
        'invalid_argument',
        'a checkpoint contains a BigInt outside the value codec; encode it with encodeValue first',
      );
    }
    const primitive = value as string | number | boolean | null;
    if (previous !== undefined && previous.shape === Shape.primitive && previous.value === primitive)
      return previous;
    const text = JSON.stringify(primitive);
    const bytes = utf8Length(text);
    if (bytes >= this.#threshold) {
      return {
        shape: Shape.primitive,
        value: primitive,
        bytes,
        indentBase: 0,
        indentPerLevel: 0,
        ref: this.#sink(`v${text}`),
      };
    }
    return { shape: Shape.primitive, value: primitive, bytes, indentBase: 0, indentPerLevel: 0, text };
  }

  #encodeOpaque(value: object, previous: EncodedNode | undefined): EncodedNode {
    const text = JSON.stringify(value);
    if (previous !== undefined && previous.shape === Shape.opaque && previous.fullText === text)
      return previous;
    return opaqueNode(value, text, this.#threshold, (body) => this.#sink(body));
  }

  #encodeArray(value: readonly unknown[], previous: EncodedNode | undefined, depth: number): EncodedNode {
    const before = previous !== undefined && previous.shape === Shape.array ? previous.children! : undefined;
    let changed = before === undefined || before.length !== value.length;
    const children: EncodedNode[] = new Array(value.length);
    for (let index = 0; index < value.length; index += 1) {
      const item = normalize(value[index], String(index));
      const prior = before?.[index];
      const child = omitted(item) ? this.#encodePrimitive(null, prior) : this.encode(item, prior, depth + 1)!;
      if (child !== prior) changed = true;
      children[index] = child;
    }
    if (!changed) return previous!;
    return this.#finishContainer(Shape.array, undefined, undefined, children, false);
  }

  #encodeObject(
    value: Record<string, unknown>,
    previous: EncodedNode | undefined,
    depth: number,
    isRoot: boolean,
  ): EncodedNode {
    const before = previous !== undefined && previous.shape === Shape.object ? previous : undefined;
    const beforeKeys = before?.keys;
    let changed = before === undefined;
    const keys: string[] = [];
    const children: EncodedNode[] = [];
    let lookup: Map<string, number> | undefined;
    for (const key of Object.keys(value)) {
      const item = normalize(value[key], key);
      if (omitted(item)) continue;
      const position = keys.length;
      let prior: EncodedNode | undefined;
      if (before !== undefined) {
        if (beforeKeys![position] === key) prior = before.children![position];
        else {
          changed = true;
          lookup ??= new Map(beforeKeys!.map((name, index) => [name, index]));
          const index = lookup.get(key);
          prior = index === undefined ? undefined : before.children![index];
        }
      }
      const child = this.encode(item, prior, depth + 1)!;
      if (child !== prior) changed = true;
      keys.push(key);
      children.push(child);
    }
    if (!changed && keys.length === beforeKeys!.length) return previous!;
    const reuseKeyTexts = before !== undefined && sameKeys(beforeKeys!, keys);
    const keyTexts = reuseKeyTexts ? before.keyTexts! : keys.map((key) => JSON.stringify(key));
    return this.#finishContainer(Shape.object, keys, keyTexts, children, isRoot);
  }

  #finishContainer(
    shape: ShapeCode,
    keys: readonly string[] | undefined,
    keyTexts: readonly string[] | undefined,
    children: readonly EncodedNode[],
    isRoot: boolean,
  ): EncodedNode {
    const measured = measureContainer(shape, keyTexts, children);
    const base = { shape, keys, keyTexts, children, ...measured };
    if (isRoot) return base;
    if (measured.bytes < this.#threshold) return { ...base, text: inlineText(shape, keyTexts, children) };
    return { ...base, ref: this.#sink(`n${this.#containerBody(base)}`) };
  }

  /** The body of a container chunk (without its `n` marker): members as ids or inline values. */
  #containerBody(node: EncodedNode): string {
    const children = node.children!;
    const parts: string[] = new Array(children.length);
    for (let index = 0; index < children.length; index += 1) {
      const child = children[index]!;
      const member = child.ref !== undefined ? String(child.ref) : `[${child.text!}]`;
      parts[index] = node.shape === Shape.object ? `${node.keyTexts![index]!}:${member}` : member;
    }
    return node.shape === Shape.object ? `{${parts.join(',')}}` : `[${parts.join(',')}]`;
  }
}

function sameKeys(left: readonly string[], right: readonly string[]): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index += 1) if (left[index] !== right[index]) return false;
  return true;
}

/**
 * Compact size and indentation overhead of a container from its children. For a non-empty
 * container with k members, pretty printing adds k+1 newlines, 2 spaces of indentation per level
 * for each member line and for the closing line, and a space after each colon of an object.
 */
export function measureContainer(
  shape: ShapeCode,
  keyTexts: readonly string[] | undefined,
  children: readonly EncodedNode[],
): { bytes: number; indentBase: number; indentPerLevel: number } {
  const count = children.length;
  let bytes = 2 + (count > 0 ? count - 1 : 0);
  let indentBase = 0;
  let indentPerLevel = 0;
  for (let index = 0; index < count; index += 1) {
    const child = children[index]!;
    bytes += child.bytes;
    if (shape === Shape.object) bytes += utf8Length(keyTexts![index]!) + 1;
    // A child one level deeper: each of its lines gets one more level of indentation.
    indentBase += child.indentBase + child.indentPerLevel;
    indentPerLevel += child.indentPerLevel;
  }
  if (count > 0) {
    indentBase += count + 1 + 2 * count + (shape === Shape.object ? count : 0);
    indentPerLevel += 2 * count + 2;
  }
  return { bytes, indentBase, indentPerLevel };
}

function inlineText(
  shape: ShapeCode,
  keyTexts: readonly string[] | undefined,
  children: readonly EncodedNode[],
): string {
  const parts: string[] = new Array(children.length);
  for (let index = 0; index < children.length; index += 1) {
    const text = children[index]!.text!;
    parts[index] = shape === Shape.object ? `${keyTexts![index]!}:${text}` : text;
  }
  return shape === Shape.object ? `{${parts.join(',')}}` : `[${parts.join(',')}]`;
}

/** A node for a value stored whole: its sizes come from JSON.stringify itself. */
export function opaqueNode(value: unknown, text: string, threshold: number, sink: ChunkSink): EncodedNode {
  const bytes = utf8Length(text);
  const pretty = utf8Length(JSON.stringify(value, null, 2));
  const nested = utf8Length(JSON.stringify([value], null, 2));
  const indentBase = pretty - bytes;
  const indentPerLevel = nested - 6 - bytes - indentBase;
  if (bytes >= threshold) {
    return { shape: Shape.opaque, bytes, indentBase, indentPerLevel, fullText: text, ref: sink(`v${text}`) };
  }
  return { shape: Shape.opaque, bytes, indentBase, indentPerLevel, fullText: text, text };
}

/** Pretty-printed size (2-space indentation, depth 0) of an encoded value, in UTF-8 bytes. */
export function prettyBytes(node: EncodedNode): number {
  return node.bytes + node.indentBase;
}
