import { CrewlineError } from '@crewline/events';
import { TreeEncoder } from './tree-encoder.js';
import {
  CHUNK_THRESHOLD_BYTES,
  containerNode,
  type EncodedNode,
  inlineNode,
  MAX_SPLIT_DEPTH,
  measureContainer,
  opaqueNode,
  primitiveNode,
  Shape,
  type ShapeCode,
  utf8Length,
  withPlace,
} from './tree-node.js';

/** Loads the body of chunk `id`; throws when it does not exist. */
export type ChunkLoader = (id: number) => string;

/**
 * The `corrupt_checkpoint` error of `component` (a provider) for stored data that does not have the
 * shape the encoder writes (a missing chunk or event, a cycle...). `what` says what is wrong; the
 * reader that catches it (see {@link isDamagedData}) names the checkpoint and how to recover.
 */
export function damagedData(component: string, what: string): CrewlineError {
  return new CrewlineError(component, 'corrupt_checkpoint', what, { details: { damaged: what } });
}

/** True for an error made by {@link damagedData}; its `details.damaged` says what is wrong. */
export function isDamagedData(error: unknown): error is CrewlineError & { details: { damaged: string } } {
  return CrewlineError.hasCode(error, 'corrupt_checkpoint') && typeof error.details?.damaged === 'string';
}

/**
 * The `corrupt_checkpoint` error a read of checkpoint `id` gives when its stored data was found
 * damaged ({@link isDamagedData}): names the checkpoint, what is wrong and how to go on.
 */
export function damagedCheckpoint(
  component: string,
  id: string,
  location: string,
  damage: CrewlineError & { details: { damaged: string } },
): CrewlineError {
  return new CrewlineError(
    component,
    'corrupt_checkpoint',
    `checkpoint "${id}" in ${location} is damaged (${damage.details.damaged}); delete it, or resume from another checkpoint`,
    { cause: damage },
  );
}

/** What reading one stored tree needs: its chunks, and the provider its errors name. */
interface TreeSource {
  readonly component: string;
  readonly load: ChunkLoader;
}

function damaged(component: string, what: string): never {
  throw damagedData(component, what);
}

/** A deeper tree than the encoder can produce means a reference cycle or damage. */
const maxDecodeDepth = MAX_SPLIT_DEPTH + 4;

function defineMember(target: Record<string, unknown>, key: string, value: unknown): void {
  // A stored key named "__proto__" must stay an own property: assigning it would set the prototype.
  // Every other key is assigned (Object.prototype has no other setter), which keeps the objects a
  // restore decodes in fast mode; defining each property made it a third of the tree's decoding.
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else target[key] = value;
}

function parseJson(component: string, text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return damaged(component, `${what} is not valid JSON`);
  }
}

/** What a member of a node body is. */
type Member =
  | { kind: 'ref'; id: number }
  | { kind: 'value'; value: unknown }
  | { kind: 'node'; shape: ShapeCode; members: object };

function classify(component: string, member: unknown): Member {
  if (typeof member === 'number') {
    if (!Number.isSafeInteger(member) || member <= 0)
      damaged(component, 'a chunk id is not a positive integer');
    return { kind: 'ref', id: member };
  }
  if (Array.isArray(member)) {
    if (member.length !== 1) damaged(component, 'an inline value is not wrapped in a one-element array');
    return { kind: 'value', value: member[0] };
  }
  if (member !== null && typeof member === 'object') {
    const wrapper = member as Record<string, unknown>;
    const keys = Object.keys(wrapper);
    if (keys.length === 1 && keys[0] === 'o' && isPlainObject(wrapper.o)) {
      return { kind: 'node', shape: Shape.object, members: wrapper.o as object };
    }
    if (keys.length === 1 && keys[0] === 'a' && Array.isArray(wrapper.a)) {
      return { kind: 'node', shape: Shape.array, members: wrapper.a };
    }
  }
  return damaged(component, 'a chunk member is neither a chunk id, an inline value nor a node');
}

function isPlainObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function parseNodeBody(component: string, body: string, what: string): { shape: ShapeCode; members: object } {
  const parsed = parseJson(component, body, what);
  if (Array.isArray(parsed)) return { shape: Shape.array, members: parsed };
  if (isPlainObject(parsed)) return { shape: Shape.object, members: parsed as object };
  return damaged(component, `${what} is not an object or array`);
}

/** The root body of a checkpoint's head (without the `n` marker) from the chunk `headId` that holds it. */
export function headBody(component: string, headId: number, load: ChunkLoader): string {
  const body = load(headId);
  if (body.charAt(0) !== 'n') damaged(component, `chunk ${headId} does not hold a head`);
  return body.slice(1);
}

/** Rebuilds the plain JSON value of a head from its root body; errors name `component`. */
export function decodeHead(component: string, rootBody: string, load: ChunkLoader): Record<string, unknown> {
  const root = parseNodeBody(component, rootBody, 'the checkpoint head');
  if (root.shape !== Shape.object) damaged(component, 'the checkpoint head is not an object');
  return decodeNode(root.shape, root.members, { component, load }, 0) as Record<string, unknown>;
}

function decodeNode(shape: ShapeCode, members: object, source: TreeSource, depth: number): unknown {
  if (depth > maxDecodeDepth)
    damaged(source.component, 'the chunk tree is nested too deeply (a reference cycle?)');
  if (shape === Shape.array) {
    const items = members as unknown[];
    const result: unknown[] = [];
    for (let index = 0; index < items.length; index += 1)
      result.push(decodeMember(items[index], source, depth));
    return result;
  }
  const result: Record<string, unknown> = {};
  for (const key of Object.keys(members)) {
    defineMember(result, key, decodeMember((members as Record<string, unknown>)[key], source, depth));
  }
  return result;
}

/**
 * What {@link classify} says of `raw`, acted on without making its description: a restore decodes
 * every member of a head, and one small object per member was most of the decoder's garbage.
 */
function decodeMember(raw: unknown, source: TreeSource, depth: number): unknown {
  const { component } = source;
  if (Array.isArray(raw)) {
    if (raw.length !== 1) damaged(component, 'an inline value is not wrapped in a one-element array');
    return raw[0];
  }
  if (typeof raw !== 'number') {
    const member = classify(component, raw);
    if (member.kind !== 'node') return damaged(component, 'a chunk member is not a node');
    return decodeNode(member.shape, member.members, source, depth + 1);
  }
  if (!Number.isSafeInteger(raw) || raw <= 0) damaged(component, 'a chunk id is not a positive integer');
  const body = source.load(raw);
  const marker = body.charAt(0);
  if (marker === 'v') return parseJson(component, body.slice(1), `chunk ${raw}`);
  if (marker === 's') {
    const items: unknown[] = [];
    for (const segment of segmentsOf(component, body, raw)) {
      const members = segmentMembers(source, segment);
      for (const item of decodeNode(Shape.array, members, source, depth + 1) as unknown[]) items.push(item);
    }
    return items;
  }
  if (marker !== 'n') damaged(component, `chunk ${raw} has an unknown marker`);
  const node = parseNodeBody(component, body.slice(1), `chunk ${raw}`);
  return decodeNode(node.shape, node.members, source, depth + 1);
}

/** The segment ids of a segmented array's chunk `s[...]` (see `SEGMENT_MEMBERS`). */
function segmentsOf(component: string, body: string, id: number): number[] {
  const ids = parseJson(component, body.slice(1), `chunk ${id}`);
  if (!Array.isArray(ids) || ids.some((item) => !Number.isSafeInteger(item) || (item as number) <= 0)) {
    damaged(component, `chunk ${id} does not list the chunk ids of an array's segments`);
  }
  return ids as number[];
}

/** The members of segment chunk `id` (an array node `n[...]`). */
function segmentMembers(source: TreeSource, id: number): unknown[] {
  const body = source.load(id);
  if (body.charAt(0) !== 'n') damaged(source.component, `chunk ${id} is not an array segment`);
  const node = parseNodeBody(source.component, body.slice(1), `chunk ${id}`);
  if (node.shape !== Shape.array) damaged(source.component, `chunk ${id} is not an array segment`);
  return node.members as unknown[];
}

/**
 * The chunk ids a node body refers to directly, including those of nodes written in place inside
 * it (for garbage collection). Values inside inline values are never ids.
 */
export function referencedChunks(component: string, body: string, found: number[] = []): number[] {
  const node = parseNodeBody(component, body, 'a node');
  const visit = (members: object, depth: number) => {
    if (depth > maxDecodeDepth) damaged(component, 'inline nodes are nested too deeply');
    for (const raw of Object.values(members)) {
      const member = classify(component, raw);
      if (member.kind === 'ref') found.push(member.id);
      else if (member.kind === 'node') visit(member.members, depth + 1);
    }
  };
  visit(node.members, 0);
  return found;
}

/**
 * The chunk ids a stored chunk refers to directly: the members of a node (`n`, see
 * {@link referencedChunks}), the segments of a segmented array (`s`), none for a value (`v`).
 */
export function chunkReferences(component: string, body: string, id: number): number[] {
  const marker = body.charAt(0);
  if (marker === 'n') return referencedChunks(component, body.slice(1));
  if (marker === 's') return segmentsOf(component, body, id);
  return [];
}

/**
 * Rebuilds the encoder's nodes for a stored head, so a write that continues from a checkpoint this
 * process did not write (a resume, a fork, another process) still stores only what changed.
 */
export function seedHead(component: string, rootBody: string, load: ChunkLoader): EncodedNode {
  const root = parseNodeBody(component, rootBody, 'the checkpoint head');
  if (root.shape !== Shape.object) damaged(component, 'the checkpoint head is not an object');
  const inline = new TreeEncoder(component, () =>
    damaged(component, 'a value stored inline is larger than the chunk threshold'),
  );
  return seedNode(root.shape, root.members, { component, load }, 0, inline);
}

function seedNode(
  shape: ShapeCode,
  members: object,
  source: TreeSource,
  depth: number,
  inline: TreeEncoder,
): EncodedNode {
  if (depth > maxDecodeDepth)
    damaged(source.component, 'the chunk tree is nested too deeply (a reference cycle?)');
  const seedMember = (raw: unknown): EncodedNode => {
    const member = classify(source.component, raw);
    if (member.kind === 'value') return inline.encode(member.value, undefined, depth + 1)!;
    if (member.kind === 'node') {
      const node = seedNode(member.shape, member.members, source, depth + 1, inline);
      return withPlace(node, { inline: inlineNode(member.shape, JSON.stringify(member.members)) });
    }
    return seedChunk(source.load(member.id), member.id, source, depth + 1, inline);
  };
  if (shape === Shape.array) {
    const children = (members as unknown[]).map(seedMember);
    return containerNode(
      shape,
      undefined,
      undefined,
      undefined,
      children,
      measureContainer(shape, 0, children),
    );
  }
  const keys = Object.keys(members);
  const keyTexts = keys.map((key) => JSON.stringify(key));
  let keysBytes = 0;
  for (const text of keyTexts) keysBytes += utf8Length(text) + 1;
  const children = keys.map((key) => seedMember((members as Record<string, unknown>)[key]));
  return containerNode(
    shape,
    keys,
    keyTexts,
    keysBytes,
    children,
    measureContainer(shape, keysBytes, children),
  );
}

function seedChunk(
  body: string,
  ref: number,
  source: TreeSource,
  depth: number,
  inline: TreeEncoder,
): EncodedNode {
  const { component } = source;
  const marker = body.charAt(0);
  if (marker === 'v') {
    const text = body.slice(1);
    const value = parseJson(component, text, `chunk ${ref}`);
    if (value !== null && typeof value === 'object') {
      return withPlace(
        opaqueNode(value, text, CHUNK_THRESHOLD_BYTES, () => ref),
        { ref },
      );
    }
    return primitiveNode(value as string | number | boolean | null, utf8Length(text), undefined, ref);
  }
  if (marker === 's') {
    const segments = segmentsOf(component, body, ref);
    const members: unknown[] = [];
    for (const segment of segments) for (const item of segmentMembers(source, segment)) members.push(item);
    return withPlace(seedNode(Shape.array, members, source, depth, inline), { ref, segments });
  }
  if (marker !== 'n') damaged(component, `chunk ${ref} has an unknown marker`);
  const node = parseNodeBody(component, body.slice(1), `chunk ${ref}`);
  return withPlace(seedNode(node.shape, node.members, source, depth, inline), { ref });
}
