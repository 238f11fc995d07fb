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
 *   `s[40,41,42]`                        a long array stored in segments: the array nodes 40, 41
 *                                        and 42 (each `n[...]`), whose members follow one another
 *
 * A node whose own body (its members, with ids for the big ones) is shorter than
 * {@link INLINE_NODE_BYTES} is written in place rather than as a chunk of its own: wrappers such as
 * an entity around its `data` cost no extra row.
 *
 * A write compares the new head with the tree it wrote last (kept in memory, or rebuilt from the
 * stored chunks) and stores new chunks only for the values that changed and for their ancestors, so a
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

/**
 * With segments on (an encoder option), an array of more members than this whose body would be longer
 * than {@link SEGMENTED_BODY_BYTES} is stored as segments of this many members (`s[...]`), so that one
 * member changing rewrites its segment and the short list of segments, not the whole list: the 500
 * tasks of a crew would otherwise cost every checkpoint a 3 KB list of ids.
 */
export const SEGMENT_MEMBERS = 32;

/** See {@link SEGMENT_MEMBERS}. */
export const SEGMENTED_BODY_BYTES = 512;

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
   * For a container: each child's value when it is a primitive, the object it was made from when
   * its run settled it ({@link EncodedNode.source}), else {@link NOT_A_PRIMITIVE}. Lets the walk
   * recognize an unchanged primitive member, or the very same settled object, from one dense array,
   * without loading the child's node or the object (most of the memory a write touches).
   */
  readonly childValues?: readonly unknown[];
  /**
   * For a container stored as a chunk or in place: each member as its body lists it (`"key":member`
   * in an object, the member alone in an array). The next encoding of the container, when only some
   * members changed, copies this and redoes those, without loading the unchanged children.
   */
  readonly childEntries?: readonly string[];
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
   * The object this node was made from, kept only when the writing run settled it (it never
   * changes, `CheckpointWrite.settled`): meeting the very same object again, the walk reuses the node without
   * comparing it member by member (completed tasks, agent definitions, finished messages).
   */
  readonly source?: object;
  /** The node as a member of its parent's body: its chunk id, in-place text or `[value]`. */
  readonly member?: string;
  /** For an array stored in segments (`s[...]` at `ref`): the chunk id of each segment, in order. */
  readonly segments?: readonly number[];
}

/**
 * Stands for "neither a primitive nor a settled object" in {@link EncodedNode.childValues}; equal
 * to no member value.
 */
export const NOT_A_PRIMITIVE: unique symbol = Symbol('not a primitive');

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
    readonly childEntries: readonly string[] | undefined,
    readonly bytes: number,
    readonly indentBase: number,
    readonly indentPerLevel: number,
    readonly text: string | undefined,
    readonly fullText: string | undefined,
    readonly ref: number | undefined,
    readonly inline: string | undefined,
    readonly source: object | undefined,
    readonly segments: readonly number[] | undefined = undefined,
  ) {
    // Computed once: the body of every later parent that keeps this child reuses it.
    this.member =
      ref !== undefined
        ? String(ref)
        : inline !== undefined
          ? inline
          : text !== undefined
            ? `[${text}]`
            : undefined;
  }

  readonly member: string | undefined;
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

/**
 * A container's node; exactly one of `text`, `ref`, `inline` is set, or none for a root. `entries`:
 * its body's members (see {@link EncodedNode.childEntries}), when they were built.
 */
export function containerNode(
  shape: ShapeCode,
  keys: readonly string[] | undefined,
  keyTexts: readonly string[] | undefined,
  keysBytes: number | undefined,
  children: readonly EncodedNode[],
  measured: Measured,
  place: { text?: string; ref?: number; inline?: string } = {},
  entries?: readonly string[],
): EncodedNode {
  return new Node(
    shape,
    undefined,
    keys,
    keyTexts,
    keysBytes,
    children,
    measured.values,
    entries,
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

/** The same node, made from `source` (an object its run settled: it never changes). */
export function withSource(node: EncodedNode, source: object): EncodedNode {
  return new Node(
    node.shape,
    node.value,
    node.keys,
    node.keyTexts,
    node.keysBytes,
    node.children,
    node.childValues,
    node.childEntries,
    node.bytes,
    node.indentBase,
    node.indentPerLevel,
    node.text,
    node.fullText,
    node.ref,
    node.inline,
    source,
    node.segments,
  );
}

/** The same node placed differently (written in place, or as a chunk). */
export function withPlace(
  node: EncodedNode,
  place: { text?: string; ref?: number; inline?: string; segments?: readonly number[] },
): EncodedNode {
  return new Node(
    node.shape,
    node.value,
    node.keys,
    node.keyTexts,
    node.keysBytes,
    node.children,
    node.childValues,
    node.childEntries,
    node.bytes,
    node.indentBase,
    node.indentPerLevel,
    place.text,
    node.fullText,
    place.ref,
    place.inline,
    node.source,
    place.ref === undefined ? undefined : place.segments,
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

/** The body of a container chunk (without its `n` marker): members as ids or inline values. */
export function containerBody(node: Pick<EncodedNode, 'shape' | 'keyTexts' | 'children'>): string {
  return bodyOf(node.shape, containerEntries(node.shape, node.keyTexts, node.children!));
}

/** The members of a container's body (see {@link EncodedNode.childEntries}). */
export function containerEntries(
  shape: ShapeCode,
  keyTexts: readonly string[] | undefined,
  children: readonly EncodedNode[],
): string[] {
  const entries: string[] = new Array(children.length);
  for (let index = 0; index < children.length; index += 1) {
    const member = children[index]!.member!;
    entries[index] = shape === Shape.object ? `${keyTexts![index]!}:${member}` : member;
  }
  return entries;
}

/** A container's body from its members (see {@link containerEntries}). */
export function bodyOf(shape: ShapeCode, entries: readonly string[]): string {
  return shape === Shape.object ? `{${entries.join(',')}}` : `[${entries.join(',')}]`;
}

/** A container's sizes (see {@link measureContainer}) and its {@link EncodedNode.childValues}. */
export interface Measured {
  bytes: number;
  indentBase: number;
  indentPerLevel: number;
  values: unknown[];
}

/**
 * Compact size and indentation overhead of a container from its children, and the children's
 * {@link EncodedNode.childValues}, in one pass over them. For a non-empty container with k members,
 * pretty printing adds k+1 newlines, 2 spaces of indentation per level for each member line and for
 * the closing line, and a space after each colon of an object.
 */
export function measureContainer(
  shape: ShapeCode,
  keysBytes: number,
  children: readonly EncodedNode[],
): Measured {
  const count = children.length;
  const values = new Array<unknown>(count);
  let bytes = 2 + (count > 0 ? count - 1 : 0) + keysBytes;
  let indentBase = 0;
  let indentPerLevel = 0;
  for (let index = 0; index < count; index += 1) {
    const child = children[index]!;
    bytes += child.bytes;
    // A child one level deeper: each of its lines gets one more level of indentation.
    indentBase += child.indentBase + child.indentPerLevel;
    indentPerLevel += child.indentPerLevel;
    values[index] = child.shape === Shape.primitive ? child.value : (child.source ?? NOT_A_PRIMITIVE);
  }
  if (count > 0) {
    indentBase += count + 1 + 2 * count + (shape === Shape.object ? count : 0);
    indentPerLevel += 2 * count + 2;
  }
  return { bytes, indentBase, indentPerLevel, values };
}

/** The member text of a node written in place. */
export function inlineNode(shape: ShapeCode, body: string): string {
  return shape === Shape.object ? `{"o":${body}}` : `{"a":${body}}`;
}

/** The compact text of a small container, from its children's texts. */
export function inlineText(
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
