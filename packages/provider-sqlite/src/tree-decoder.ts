import {
  CHUNK_THRESHOLD_BYTES,
  type EncodedNode,
  MAX_SPLIT_DEPTH,
  measureContainer,
  opaqueNode,
  Shape,
  TreeEncoder,
  utf8Length,
} from './tree-encoder.js';

/** Loads the body of chunk `id`; throws when it does not exist. */
export type ChunkLoader = (id: number) => string;

/** Thrown for stored data that does not have the shape the encoder writes. */
export class DamagedTreeError extends Error {}

function damaged(what: string): never {
  throw new DamagedTreeError(what);
}

/** A deeper tree than the encoder can produce means a reference cycle or damage. */
const maxDecodeDepth = MAX_SPLIT_DEPTH + 4;

function defineMember(target: Record<string, unknown>, key: string, value: unknown): void {
  // defineProperty, never assignment: a stored key named "__proto__" must stay an own property.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return damaged(`${what} is not valid JSON`);
  }
}

/** Rebuilds the plain JSON value of a head from its root body. */
export function decodeHead(rootBody: string, load: ChunkLoader): Record<string, unknown> {
  const root = parseJson(rootBody, 'the checkpoint head');
  if (root === null || typeof root !== 'object' || Array.isArray(root))
    damaged('the checkpoint head is not an object');
  return decodeMembers(root as Record<string, unknown>, load, 0) as Record<string, unknown>;
}

function decodeMembers(container: object, load: ChunkLoader, depth: number): unknown {
  if (depth > maxDecodeDepth) damaged('the chunk tree is nested too deeply (a reference cycle?)');
  if (Array.isArray(container)) return container.map((member) => decodeMember(member, load, depth));
  const result: Record<string, unknown> = {};
  for (const key of Object.keys(container)) {
    defineMember(result, key, decodeMember((container as Record<string, unknown>)[key], load, depth));
  }
  return result;
}

function decodeMember(member: unknown, load: ChunkLoader, depth: number): unknown {
  if (typeof member === 'number') return decodeChunk(load(member), load, depth + 1);
  if (Array.isArray(member) && member.length === 1) return member[0];
  return damaged('a chunk member is neither a chunk id nor an inline value');
}

function decodeChunk(body: string, load: ChunkLoader, depth: number): unknown {
  const marker = body.charAt(0);
  if (marker === 'v') return parseJson(body.slice(1), 'a value chunk');
  if (marker !== 'n') damaged('a chunk has an unknown marker');
  const container = parseJson(body.slice(1), 'a node chunk');
  if (container === null || typeof container !== 'object') damaged('a node chunk is not an object or array');
  return decodeMembers(container as object, load, depth);
}

const refuseToStore = (): number => {
  throw new DamagedTreeError('a value stored inline is larger than the chunk threshold');
};

/**
 * Rebuilds the encoder's nodes for a stored head, so a write that continues from a checkpoint this
 * process did not write (a resume, a fork, another process) still stores only what changed.
 */
export function seedHead(rootBody: string, load: ChunkLoader): EncodedNode {
  const root = parseJson(rootBody, 'the checkpoint head');
  if (root === null || typeof root !== 'object' || Array.isArray(root))
    damaged('the checkpoint head is not an object');
  const inline = new TreeEncoder(refuseToStore);
  const node = seedContainer(root as object, undefined, load, 0, inline);
  // The root is a row field, not a chunk: drop what seedContainer derived for a chunk.
  return { ...node, ref: undefined, text: undefined };
}

function seedContainer(
  container: object,
  ref: number | undefined,
  load: ChunkLoader,
  depth: number,
  inline: TreeEncoder,
): EncodedNode {
  if (depth > maxDecodeDepth) damaged('the chunk tree is nested too deeply (a reference cycle?)');
  const seedMember = (member: unknown): EncodedNode => {
    if (typeof member === 'number') return seedChunk(load(member), member, load, depth + 1, inline);
    if (Array.isArray(member) && member.length === 1) return inline.encode(member[0], undefined, depth + 1)!;
    return damaged('a chunk member is neither a chunk id nor an inline value');
  };
  if (Array.isArray(container)) {
    const children = container.map(seedMember);
    return { shape: Shape.array, children, ...measureContainer(Shape.array, undefined, children), ref };
  }
  const keys = Object.keys(container);
  const keyTexts = keys.map((key) => JSON.stringify(key));
  const children = keys.map((key) => seedMember((container as Record<string, unknown>)[key]));
  return {
    shape: Shape.object,
    keys,
    keyTexts,
    children,
    ...measureContainer(Shape.object, keyTexts, children),
    ref,
  };
}

function seedChunk(
  body: string,
  ref: number,
  load: ChunkLoader,
  depth: number,
  inline: TreeEncoder,
): EncodedNode {
  const marker = body.charAt(0);
  if (marker === 'v') {
    const text = body.slice(1);
    const value = parseJson(text, 'a value chunk');
    if (value !== null && typeof value === 'object') {
      return { ...opaqueNode(value, text, CHUNK_THRESHOLD_BYTES, () => ref), ref };
    }
    return {
      shape: Shape.primitive,
      value: value as string | number | boolean | null,
      bytes: utf8Length(text),
      indentBase: 0,
      indentPerLevel: 0,
      ref,
    };
  }
  if (marker !== 'n') damaged('a chunk has an unknown marker');
  const container = parseJson(body.slice(1), 'a node chunk');
  if (container === null || typeof container !== 'object') damaged('a node chunk is not an object or array');
  return seedContainer(container as object, ref, load, depth, inline);
}
