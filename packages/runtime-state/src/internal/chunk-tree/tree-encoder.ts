import { CrewlineError } from '@crewline/events';
import type { SettledParts } from '../../provider.js';
import {
  bodyOf,
  CHUNK_THRESHOLD_BYTES,
  type ChunkSink,
  containerBody,
  containerEntries,
  containerNode,
  type EncodedNode,
  INLINE_NODE_BYTES,
  inlineNode,
  inlineText,
  MAX_INLINE_BODY_BYTES,
  MAX_SPLIT_DEPTH,
  type Measured,
  MIN_MOVED_BYTES,
  measureContainer,
  NOT_A_PRIMITIVE,
  opaqueNode,
  primitiveNode,
  SEGMENT_MEMBERS,
  SEGMENTED_BODY_BYTES,
  Shape,
  type ShapeCode,
  utf8Length,
  withPlace,
  withSource,
} from './tree-node.js';

// The tree format and its nodes are described in tree-node.ts; this module builds them from values.

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
  /** The provider whose errors this encoding throws (`provider-sqlite`...). */
  component: string;
  sink: ChunkSink;
  threshold: number;
  /** Object.prototype has no enumerable keys, so for...in needs no own-key check on plain objects. */
  fastKeys: boolean;
  /** The writing run's settled objects (`CheckpointWrite.settled`), when it says. */
  settled: SettledParts | undefined;
  /** Long arrays are stored in segments (`s[...]`, see {@link SEGMENT_MEMBERS}). */
  segmentArrays: boolean;
}

/**
 * Encodes JSON values into chunks, reusing the nodes of a previous encoding for every value that
 * did not change. `sink` receives the bodies of new chunks; pass one that throws to build nodes
 * without storing anything (all values must then be small). `component` names the provider in the
 * errors the encoding throws.
 *
 * The comparison walks the whole value on every write, so the functions below are plain module
 * functions (no private-method dispatch), avoid allocating for unchanged values and iterate plain
 * objects with `for...in`: that walk is most of what a write costs in JavaScript.
 */
export class TreeEncoder {
  readonly #context: EncodeContext;

  /**
   * With `segmentArrays`, long arrays are stored in segments (`s[...]`): only a reader that knows
   * that marker (this package's decoder, from the version that added it) can read them back.
   */
  constructor(
    component: string,
    sink: ChunkSink,
    threshold = CHUNK_THRESHOLD_BYTES,
    options: { segmentArrays?: boolean } = {},
  ) {
    this.#context = {
      component,
      sink,
      threshold,
      fastKeys: true,
      settled: undefined,
      segmentArrays: options.segmentArrays === true,
    };
  }

  /**
   * Encodes the root object of a head. The root is never stored by the encoder: its body (without
   * the `n`) is returned for the caller to store, together with the node to reuse next time. The
   * nodes made for objects in `settled` (the write's `CheckpointWrite.settled`) keep them, and are
   * reused whole when a later encoding meets the very same object. When nothing changed, `node` is
   * `previous` itself: a caller that still has the root `previous` was stored as can name it again
   * without reading `body` (built only when read).
   */
  encodeRoot(
    value: Record<string, unknown>,
    previous: EncodedNode | undefined,
    settled?: SettledParts,
  ): { node: EncodedNode; readonly body: string } {
    this.#context.fastKeys = prototypeIsClean();
    this.#context.settled = settled;
    const node = encodeObject(this.#context, value, previous, 0, true);
    return {
      node,
      get body() {
        return containerBody(node);
      },
    };
  }

  /** Encodes any JSON value at `depth`. Returns undefined for values JSON leaves out. */
  encode(value: unknown, previous: EncodedNode | undefined, depth: number): EncodedNode | undefined {
    this.#context.fastKeys = prototypeIsClean();
    this.#context.settled = undefined;
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
    // The very object encoded last time, which its run settled (it never changes): reuse it whole.
    if (previous !== undefined && previous.source === value) return previous;
    const node =
      depth >= MAX_SPLIT_DEPTH
        ? encodeOpaque(context, value, previous)
        : Array.isArray(value)
          ? encodeArray(context, value, previous, depth)
          : encodeObject(context, value as Record<string, unknown>, previous, depth, false);
    // Only a node made now takes the object: a reused one keeps its identity, so that the parent
    // does not look changed (and get rewritten) for nothing.
    if (node !== previous && context.settled?.has(value)) return withSource(node, value);
    return node;
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    if (previous !== undefined && previous.value === value && previous.shape === Shape.primitive)
      return previous;
    return encodePrimitive(context, value, previous);
  }
  if (typeof value === 'bigint') {
    throw new CrewlineError(
      context.component,
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
  const reusable = before === undefined ? 0 : Math.min(before.length, length);
  for (let index = 0; index < length; index += 1) {
    const raw = value[index];
    // An unchanged primitive member, or the very settled object encoded there last time (see
    // EncodedNode.childValues), recognized without loading its node or looking inside the object.
    if (index < reusable && beforeValues![index] === raw && raw !== undefined) {
      children?.push(before![index]!);
      continue;
    }
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
  const layout = before !== undefined && before.length === length ? previous : undefined;
  return finishContainer(
    context,
    Shape.array,
    undefined,
    undefined,
    undefined,
    children,
    false,
    previous,
    layout,
  );
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
      // The common case, handled without a call or a node load: an unchanged primitive member, or
      // the very settled object encoded there last time (see EncodedNode.childValues).
      if (beforeValues![position] === raw && raw !== undefined) {
        if (children !== undefined) {
          names!.push(key);
          children.push(beforeChildren![position]!);
        }
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
  return finishContainer(
    context,
    Shape.object,
    names,
    keyTexts,
    keysBytes,
    children,
    isRoot,
    previous,
    reuse ? before : undefined,
  );
}

/**
 * Makes the node of a container from its (new) children, placed as its size says. `previous` is
 * the container's last encoding, `layout` the same when it has these very keys (an object) or as
 * many members (an array): then only the members that changed are measured and written again (the
 * unchanged children are not even loaded: most of what a long list of tasks would cost each write).
 */
function finishContainer(
  context: EncodeContext,
  shape: ShapeCode,
  keys: readonly string[] | undefined,
  keyTexts: readonly string[] | undefined,
  keysBytes: number | undefined,
  initialChildren: readonly EncodedNode[],
  isRoot: boolean,
  previous: EncodedNode | undefined,
  layout: EncodedNode | undefined,
): EncodedNode {
  let children = initialChildren;
  const measured =
    layout === undefined ? measureContainer(shape, keysBytes ?? 0, children) : remeasure(layout, children);
  if (isRoot) return containerNode(shape, keys, keyTexts, keysBytes, children, measured);
  if (measured.bytes < context.threshold) {
    return containerNode(shape, keys, keyTexts, keysBytes, children, measured, {
      text: inlineText(shape, keyTexts, children),
    });
  }
  let entries =
    layout?.childEntries === undefined
      ? containerEntries(shape, keyTexts, children)
      : rewriteEntries(shape, keyTexts, layout.childEntries.slice(), layout.children!, children);
  let body = bodyOf(shape, entries);
  if (body.length > MAX_INLINE_BODY_BYTES) {
    const moved = children.map((child) => moveOut(context, child));
    entries = rewriteEntries(shape, keyTexts, entries, children, moved);
    children = moved;
    body = bodyOf(shape, entries);
  }
  if (body.length < INLINE_NODE_BYTES) {
    return containerNode(
      shape,
      keys,
      keyTexts,
      keysBytes,
      children,
      measured,
      { inline: inlineNode(shape, body) },
      entries,
    );
  }
  if (
    context.segmentArrays &&
    shape === Shape.array &&
    children.length > SEGMENT_MEMBERS &&
    body.length > SEGMENTED_BODY_BYTES
  ) {
    const node = containerNode(shape, keys, keyTexts, keysBytes, children, measured, {}, entries);
    return withPlace(node, segmentedPlace(context, children, previous));
  }
  return containerNode(
    shape,
    keys,
    keyTexts,
    keysBytes,
    children,
    measured,
    { ref: context.sink(`n${body}`) },
    entries,
  );
}

/**
 * {@link measureContainer} of `children` from `layout`'s measure: `children` has as many members (and,
 * for an object, the same keys), so only those that are not `layout`'s own children are looked at.
 */
function remeasure(layout: EncodedNode, children: readonly EncodedNode[]): Measured {
  const before = layout.children!;
  const values = layout.childValues!.slice();
  let { bytes, indentBase, indentPerLevel } = layout;
  for (let index = 0; index < children.length; index += 1) {
    const child = children[index]!;
    const prior = before[index]!;
    if (child === prior) continue;
    bytes += child.bytes - prior.bytes;
    indentBase += child.indentBase + child.indentPerLevel - prior.indentBase - prior.indentPerLevel;
    indentPerLevel += child.indentPerLevel - prior.indentPerLevel;
    values[index] = child.shape === Shape.primitive ? child.value : (child.source ?? NOT_A_PRIMITIVE);
  }
  return { bytes, indentBase, indentPerLevel, values };
}

/** `entries` (the body members of `before`), rewritten in place where `after` has another child. */
function rewriteEntries(
  shape: ShapeCode,
  keyTexts: readonly string[] | undefined,
  entries: string[],
  before: readonly EncodedNode[],
  after: readonly EncodedNode[],
): string[] {
  for (let index = 0; index < after.length; index += 1) {
    const child = after[index]!;
    if (child === before[index]) continue;
    entries[index] = shape === Shape.object ? `${keyTexts![index]!}:${child.member!}` : child.member!;
  }
  return entries;
}

/**
 * Where a long array goes when stored in segments: a chunk `s[...]` naming one array chunk per
 * {@link SEGMENT_MEMBERS} members. A segment whose members are those of the same segment of
 * `previous` (the array's last encoding) keeps its chunk, and so does the list when no segment changed.
 */
function segmentedPlace(
  context: EncodeContext,
  children: readonly EncodedNode[],
  previous: EncodedNode | undefined,
): { ref: number; segments: readonly number[] } {
  const before = previous?.segments !== undefined ? previous : undefined;
  const segments: number[] = [];
  let changed = before === undefined;
  for (let start = 0, index = 0; start < children.length; start += SEGMENT_MEMBERS, index += 1) {
    const end = Math.min(start + SEGMENT_MEMBERS, children.length);
    const kept = before !== undefined && sameSegment(children, before, start, end);
    if (kept) {
      segments.push(before.segments![index]!);
      continue;
    }
    changed = true;
    const members = children.slice(start, end);
    segments.push(
      context.sink(`n${containerBody({ shape: Shape.array, keyTexts: undefined, children: members })}`),
    );
  }
  if (!changed && before!.segments!.length === segments.length) return { ref: before!.ref!, segments };
  return { ref: context.sink(`s[${segments.join(',')}]`), segments };
}

/** True when members `start` to `end` are the whole of the same segment of `before`, unchanged. */
function sameSegment(
  children: readonly EncodedNode[],
  before: EncodedNode,
  start: number,
  end: number,
): boolean {
  const beforeChildren = before.children!;
  if (Math.min(start + SEGMENT_MEMBERS, beforeChildren.length) !== end) return false;
  for (let index = start; index < end; index += 1) {
    const child = children[index]!;
    const prior = beforeChildren[index]!;
    if (child !== prior && child.member !== prior.member) return false;
  }
  return true;
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

function sameKeys(left: readonly string[], right: readonly string[]): boolean {
  if (left.length !== right.length) return false;
  for (let index = 0; index < left.length; index += 1) if (left[index] !== right[index]) return false;
  return true;
}
