import { isMarkedRedacted } from '@crewline/runtime-state';
import { sqliteError } from './errors.js';

/**
 * The head of a checkpoint (kickoff inputs and entities) is stored as a tree of chunks. Every JSON
 * value whose compact text is at least {@link CHUNK_THRESHOLD_BYTES} long is a node of the tree;
 * smaller values are written inline inside their parent. A node lists its members, each either a
 * chunk id (a JSON number), an inline value wrapped in a one-element array, or a small node written
 * in place (`{"o":{...}}` for an object, `{"a":[...]}` for an array):
 *
 *   `n{"status":["done"],"output":42}`   an object node stored as a chunk; `output` is chunk 42
 *   `n[17,["small"],{"o":{"raw":18}}]`   an array node; its third member is an object node in place
 *   `v"...long string..."`               a value stored whole (a long string, or a deep subtree)
 *
 * A node whose own body (its members, with ids for the big ones) is shorter than
 * {@link INLINE_NODE_BYTES} is written in place rather than as a chunk of its own: wrappers such as
 * an entity around its `data` cost no extra row.
 *
 * A write compares the new head with the tree it wrote last (kept in memory, or rebuilt from the
 * database) and stores new chunks only for the values that changed and for their ancestors, so a
 * checkpoint after one more event costs a few hundred bytes, not the whole crew again.
 */
export const CHUNK_THRESHOLD_BYTES = 256;

/** A node whose body is shorter than this is written inside its parent instead of as a chunk. */
export const INLINE_NODE_BYTES = 160;

/**
 * A body longer than this moves its in-place children (small nodes and values of at least
 * {@link MIN_MOVED_BYTES}) out into chunks of their own, so that a long list of small items (50
 * pending tasks) is not rewritten whole each time one of them changes.
 */
export const MAX_INLINE_BODY_BYTES = 512;

/** In-place children shorter than this stay in place even in a long body: an id costs as much. */
export const MIN_MOVED_BYTES = 16;

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
  /** UTF-8 bytes of all key texts and their colons. */
  readonly keysBytes?: number;
  readonly children?: readonly EncodedNode[];
  /**
   * For a container: each child's value when it is a primitive, else {@link NOT_A_PRIMITIVE}. Lets
   * the walk recognize an unchanged primitive member from one dense array, without loading the
   * child's node (most of the memory a write touches).
   */
  readonly childValues?: readonly unknown[];
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
  /** The node's member text written in place (`{"o":...}`/`{"a":...}`), when its body is small. */
  readonly inline?: string;
  /**
   * The object this node was made from, kept only when its owner marked it as never changing
   * (`markRedacted`): meeting the very same object again, the walk reuses the node without
   * comparing it member by member (completed tasks, agent definitions, finished messages).
   */
  readonly source?: object;
}

/** Stands for "not a primitive" in {@link EncodedNode.childValues}; equal to no member value. */
export const NOT_A_PRIMITIVE: unique symbol = Symbol('not a primitive');

function valuesOf(children: readonly EncodedNode[]): unknown[] {
  const values = new Array<unknown>(children.length);
  for (let index = 0; index < children.length; index += 1) {
    const child = children[index]!;
    values[index] = child.shape === Shape.primitive ? child.value : NOT_A_PRIMITIVE;
  }
  return values;
}

/**
 * The one class every {@link EncodedNode} is built as. All fields always exist, in one order, so
 * every node shares one hidden class and the comparison walk's property reads stay monomorphic.
 */
class Node implements EncodedNode {
  constructor(
    readonly shape: ShapeCode,
    readonly value: string | number | boolean | null | undefined,
    readonly keys: readonly string[] | undefined,
    readonly keyTexts: readonly string[] | undefined,
    readonly keysBytes: number | undefined,
    readonly children: readonly EncodedNode[] | undefined,
    readonly childValues: readonly unknown[] | undefined,
    readonly bytes: number,
    readonly indentBase: number,
    readonly indentPerLevel: number,
    readonly text: string | undefined,
    readonly fullText: string | undefined,
    readonly ref: number | undefined,
    readonly inline: string | undefined,
    readonly source: object | undefined,
  ) {}
}

/** A primitive's node. */
export function primitiveNode(
  value: string | number | boolean | null,
  bytes: number,
  text: string | undefined,
  ref: number | undefined,
): EncodedNode {
  return new Node(
    Shape.primitive,
    value,
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    bytes,
    0,
    0,
    text,
    undefined,
    ref,
    undefined,
    undefined,
  );
}

/** A container's node; exactly one of `text`, `ref`, `inline` is set, or none for a root. */
export function containerNode(
  shape: ShapeCode,
  keys: readonly string[] | undefined,
  keyTexts: readonly string[] | undefined,
  keysBytes: number | undefined,
  children: readonly EncodedNode[],
  measured: { bytes: number; indentBase: number; indentPerLevel: number },
  place: { text?: string; ref?: number; inline?: string } = {},
): EncodedNode {
  return new Node(
    shape,
    undefined,
    keys,
    keyTexts,
    keysBytes,
    children,
    valuesOf(children),
    measured.bytes,
    measured.indentBase,
    measured.indentPerLevel,
    place.text,
    undefined,
    place.ref,
    place.inline,
    undefined,
  );
}

/** The same node, made from `source` (an object marked as never changing). */
function withSource(node: EncodedNode, source: object): EncodedNode {
  return new Node(
    node.shape,
    node.value,
    node.keys,
    node.keyTexts,
    node.keysBytes,
    node.children,
    node.childValues,
    node.bytes,
    node.indentBase,
    node.indentPerLevel,
    node.text,
    node.fullText,
    node.ref,
    node.inline,
    source,
  );
}

/** The same node placed differently (written in place, or as a chunk). */
export function withPlace(
  node: EncodedNode,
  place: { text?: string; ref?: number; inline?: string },
): EncodedNode {
  return new Node(
    node.shape,
    node.value,
    node.keys,
    node.keyTexts,
    node.keysBytes,
    node.children,
    node.childValues,
    node.bytes,
    node.indentBase,
    node.indentPerLevel,
    place.text,
    node.fullText,
    place.ref,
    place.inline,
    node.source,
  );
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

/** What JSON.stringify does to an object member before writing it (toJSON, boxed primitives). */
function normalizeObject(value: object, key: string): unknown {
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function')
    return normalizePrimitive((toJSON as (key: string) => unknown).call(value, key), key);
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return value.valueOf();
  return value;
}

function normalizePrimitive(value: unknown, key: string): unknown {
  if (typeof value === 'object' && value !== null) {
    if (value instanceof Number || value instanceof String || value instanceof Boolean)
      return value.valueOf();
    return value;
  }
  if (typeof value === 'bigint') {
    const toJSON = (value as unknown as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return (toJSON as (key: string) => unknown).call(value, key);
  }
  return value;
}

/**
 * A member as JSON.stringify sees it. Plain objects and arrays (the whole of a JSON-safe snapshot)
 * are taken as they are; anything else goes through toJSON and unboxing. Undefined, functions and
 * symbols come back as they are, for the caller to leave out.
 */
function member(item: unknown, key: string | number): unknown {
  if (typeof item === 'object') {
    if (item === null) return null;
    const prototype = Object.getPrototypeOf(item);
    if (prototype === Object.prototype || prototype === Array.prototype || prototype === null) return item;
    return normalizeObject(item, String(key));
  }
  if (typeof item === 'bigint') return normalizePrimitive(item, String(key));
  return item;
}

function leftOut(item: unknown): boolean {
  return item === undefined || typeof item === 'function' || typeof item === 'symbol';
}

/** True unless someone added enumerable properties to Object.prototype (then own keys are checked). */
function prototypeIsClean(): boolean {
  for (const _ in {}) return false;
  return true;
}

/** What the encoding functions share for one encoding. */
interface EncodeContext {
  sink: ChunkSink;
  threshold: number;
  /** Object.prototype has no enumerable keys, so for...in needs no own-key check on plain objects. */
  fastKeys: boolean;
}

/**
 * Encodes JSON values into chunks, reusing the nodes of a previous encoding for every value that
 * did not change. `sink` receives the bodies of new chunks; pass one that throws to build nodes
 * without storing anything (all values must then be small).
 *
 * The comparison walks the whole value on every write, so the functions below are plain module
 * functions (no private-method dispatch), avoid allocating for unchanged values and iterate plain
 * objects with `for...in`: that walk is most of what a write costs in JavaScript.
 */
export class TreeEncoder {
  readonly #context: EncodeContext;

  constructor(sink: ChunkSink, threshold = CHUNK_THRESHOLD_BYTES) {
    this.#context = { sink, threshold, fastKeys: true };
  }

  /**
   * Encodes the root object of a head. The root is never a chunk: its body (without the `n`) is
   * returned for the checkpoint row, together with the node to reuse next time.
   */
  encodeRoot(
    value: Record<string, unknown>,
    previous: EncodedNode | undefined,
  ): { node: EncodedNode; body: string } {
    this.#context.fastKeys = prototypeIsClean();
    const node = encodeObject(this.#context, value, previous, 0, true);
    return { node, body: containerBody(node) };
  }

  /** Encodes any JSON value at `depth`. Returns undefined for values JSON leaves out. */
  encode(value: unknown, previous: EncodedNode | undefined, depth: number): EncodedNode | undefined {
    this.#context.fastKeys = prototypeIsClean();
    return encodeMember(this.#context, member(value, ''), previous, depth);
  }
}

/** Encodes a value already passed through {@link member}. */
function encodeMember(
  context: EncodeContext,
  value: unknown,
  previous: EncodedNode | undefined,
  depth: number,
): EncodedNode | undefined {
  if (typeof value === 'object') {
    if (value === null) return encodePrimitive(context, null, previous);
    // The very object encoded last time, which its owner marked as never changing: reuse it whole.
    if (previous !== undefined && previous.source === value) return previous;
    const node =
      depth >= MAX_SPLIT_DEPTH
        ? encodeOpaque(context, value, previous)
        : Array.isArray(value)
          ? encodeArray(context, value, previous, depth)
          : encodeObject(context, value as Record<string, unknown>, previous, depth, false);
    // Only a node made now takes the object: a reused one keeps its identity, so that the parent
    // does not look changed (and get rewritten) for nothing.
    if (node !== previous && isMarkedRedacted(value)) return withSource(node, value);
    return node;
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    if (previous !== undefined && previous.value === value && previous.shape === Shape.primitive)
      return previous;
    return encodePrimitive(context, value, previous);
  }
  if (typeof value === 'bigint') {
    throw sqliteError(
      'invalid_argument',
      'a checkpoint contains a BigInt outside the value codec; encode it with encodeValue first',
    );
  }
  return undefined;
}

function encodePrimitive(
  context: EncodeContext,
  value: string | number | boolean | null,
  previous: EncodedNode | undefined,
): EncodedNode {
  if (previous !== undefined && previous.shape === Shape.primitive && previous.value === value)
    return previous;
  const text = JSON.stringify(value);
  const bytes = utf8Length(text);
  if (bytes >= context.threshold) return primitiveNode(value, bytes, undefined, context.sink(`v${text}`));
  return primitiveNode(value, bytes, text, undefined);
}

function encodeOpaque(context: EncodeContext, value: object, previous: EncodedNode | undefined): EncodedNode {
  const text = JSON.stringify(value);
  if (previous !== undefined && previous.shape === Shape.opaque && previous.fullText === text)
    return previous;
  return opaqueNode(value, text, context.threshold, context.sink);
}

function encodeArray(
  context: EncodeContext,
  value: readonly unknown[],
  previous: EncodedNode | undefined,
  depth: number,
): EncodedNode {
  const length = value.length;
  const before = previous !== undefined && previous.shape === Shape.array ? previous.children! : undefined;
  const beforeValues = before === undefined ? undefined : previous!.childValues!;
  // Children are only copied out once a member differs: an unchanged array allocates nothing.
  let children: EncodedNode[] | undefined = before === undefined || before.length !== length ? [] : undefined;
  for (let index = 0; index < length; index += 1) {
    const raw = value[index];
    // An unchanged primitive member, recognized without loading its node.
    if (children === undefined && beforeValues![index] === raw && raw !== undefined) continue;
    const prior = before?.[index];
    const item = typeof raw === 'object' || typeof raw === 'bigint' ? member(raw, index) : raw;
    const child = leftOut(item)
      ? encodePrimitive(context, null, prior)
      : encodeMember(context, item, prior, depth + 1)!;
    if (children === undefined) {
      if (child === prior) continue;
      children = before!.slice(0, index);
    }
    children.push(child);
  }
  if (children === undefined) return previous!;
  return finishContainer(context, Shape.array, undefined, undefined, undefined, children, false);
}

function encodeObject(
  context: EncodeContext,
  value: Record<string, unknown>,
  previous: EncodedNode | undefined,
  depth: number,
  isRoot: boolean,
): EncodedNode {
  const before = previous !== undefined && previous.shape === Shape.object ? previous : undefined;
  const beforeKeys = before?.keys;
  const beforeChildren = before?.children;
  const beforeValues = before?.childValues;
  // Names and children are only copied out once a member differs from the previous encoding.
  let names: string[] | undefined = before === undefined ? [] : undefined;
  let children: EncodedNode[] | undefined = before === undefined ? [] : undefined;
  let lookup: Map<string, number> | undefined;
  let position = 0;
  const prototype = Object.getPrototypeOf(value);
  // for...in visits a plain object's own enumerable keys in Object.keys order, without building
  // a key array; other objects (class instances) also get their inherited keys filtered out.
  const checkOwn = !context.fastKeys || (prototype !== Object.prototype && prototype !== null);
  for (const key in value) {
    if (checkOwn && !Object.hasOwn(value, key)) continue;
    const raw = value[key];
    let prior: EncodedNode | undefined;
    const samePlace = beforeKeys !== undefined && beforeKeys[position] === key;
    if (samePlace) {
      // The common case, handled without a call or a node load: an unchanged primitive member.
      if (children === undefined && beforeValues![position] === raw && raw !== undefined) {
        position += 1;
        continue;
      }
      prior = beforeChildren![position]!;
    }
    const item = typeof raw === 'object' || typeof raw === 'bigint' ? member(raw, key) : raw;
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    if (!samePlace && beforeKeys !== undefined) {
      lookup ??= new Map(beforeKeys.map((name, index) => [name, index]));
      const index = lookup.get(key);
      prior = index === undefined ? undefined : beforeChildren![index];
    }
    const child = encodeMember(context, item, prior, depth + 1)!;
    if (children === undefined) {
      if (samePlace && child === prior) {
        position += 1;
        continue;
      }
      names = beforeKeys!.slice(0, position);
      children = beforeChildren!.slice(0, position);
    }
    names!.push(key);
    children.push(child);
    position += 1;
  }
  if (children === undefined) {
    if (position === beforeKeys!.length) return previous!;
    names = beforeKeys!.slice(0, position);
    children = beforeChildren!.slice(0, position);
  }
  const reuse = before !== undefined && sameKeys(beforeKeys!, names!);
  const keyTexts = reuse ? before.keyTexts! : names!.map((key) => JSON.stringify(key));
  let keysBytes = before?.keysBytes ?? 0;
  if (!reuse) {
    keysBytes = 0;
    for (const text of keyTexts) keysBytes += utf8Length(text) + 1;
  }
  return finishContainer(context, Shape.object, names, keyTexts, keysBytes, children, isRoot);
}

function finishContainer(
  context: EncodeContext,
  shape: ShapeCode,
  keys: readonly string[] | undefined,
  keyTexts: readonly string[] | undefined,
  keysBytes: number | undefined,
  initialChildren: readonly EncodedNode[],
  isRoot: boolean,
): EncodedNode {
  let children = initialChildren;
  const measured = measureContainer(shape, keysBytes ?? 0, children);
  if (isRoot) return containerNode(shape, keys, keyTexts, keysBytes, children, measured);
  if (measured.bytes < context.threshold) {
    return containerNode(shape, keys, keyTexts, keysBytes, children, measured, {
      text: inlineText(shape, keyTexts, children),
    });
  }
  let body = containerBody({ shape, keyTexts, children });
  if (body.length > MAX_INLINE_BODY_BYTES) {
    children = children.map((child) => moveOut(context, child));
    body = containerBody({ shape, keyTexts, children });
  }
  if (body.length < INLINE_NODE_BYTES) {
    return containerNode(shape, keys, keyTexts, keysBytes, children, measured, {
      inline: inlineNode(shape, body),
    });
  }
  return containerNode(shape, keys, keyTexts, keysBytes, children, measured, {
    ref: context.sink(`n${body}`),
  });
}

/** A child that sits in place in its parent's body, stored as a chunk of its own instead. */
function moveOut(context: EncodeContext, child: EncodedNode): EncodedNode {
  if (child.ref !== undefined) return child;
  if (child.inline !== undefined) {
    if (child.inline.length < MIN_MOVED_BYTES) return child;
    return withPlace(child, { ref: context.sink(`n${child.inline.slice(5, -1)}`) });
  }
  if (child.text === undefined || child.text.length < MIN_MOVED_BYTES) return child;
  if (child.shape === Shape.primitive || child.shape === Shape.opaque) {
    return withPlace(child, { ref: context.sink(`v${child.text}`) });
  }
  // A small object or array held as a value: a node chunk whose members are all in place.
  return withPlace(child, { ref: context.sink(`n${containerBody(child)}`) });
}

/** The body of a container chunk (without its `n` marker): members as ids or inline values. */
function containerBody(node: Pick<EncodedNode, 'shape' | 'keyTexts' | 'children'>): string {
  const children = node.children!;
  const parts: string[] = new Array(children.length);
  for (let index = 0; index < children.length; index += 1) {
    const child = children[index]!;
    const member =
      child.ref !== undefined
        ? String(child.ref)
        : child.inline !== undefined
          ? child.inline
          : `[${child.text!}]`;
    parts[index] = node.shape === Shape.object ? `${node.keyTexts![index]!}:${member}` : member;
  }
  return node.shape === Shape.object ? `{${parts.join(',')}}` : `[${parts.join(',')}]`;
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
  keysBytes: number,
  children: readonly EncodedNode[],
): { bytes: number; indentBase: number; indentPerLevel: number } {
  const count = children.length;
  let bytes = 2 + (count > 0 ? count - 1 : 0) + keysBytes;
  let indentBase = 0;
  let indentPerLevel = 0;
  for (let index = 0; index < count; index += 1) {
    const child = children[index]!;
    bytes += child.bytes;
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

/** The member text of a node written in place. */
export function inlineNode(shape: ShapeCode, body: string): string {
  return shape === Shape.object ? `{"o":${body}}` : `{"a":${body}}`;
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
  const stored = bytes >= threshold;
  return new Node(
    Shape.opaque,
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    bytes,
    indentBase,
    indentPerLevel,
    stored ? undefined : text,
    text,
    stored ? sink(`v${text}`) : undefined,
    undefined,
    undefined,
  );
}

/** Pretty-printed size (2-space indentation, depth 0) of an encoded value, in UTF-8 bytes. */
export function prettyBytes(node: EncodedNode): number {
  return node.bytes + node.indentBase;
}
