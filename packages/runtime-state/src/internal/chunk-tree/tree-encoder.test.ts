import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SettledValues } from '../../settled-values.js';
import { decodeHead, headBody, referencedChunks, seedHead } from './tree-decoder.js';
import { TreeEncoder } from './tree-encoder.js';
import { type EncodedNode, prettyBytes, utf8Length } from './tree-node.js';

/** The provider the errors of these encodings and decodings name. */
const component = 'provider-under-test';

/** An in-memory chunk store standing in for a provider's table of chunks. */
function chunkStore() {
  const bodies = new Map<number, string>();
  let next = 0;
  return {
    bodies,
    sink: (body: string) => {
      next += 1;
      bodies.set(next, body);
      return next;
    },
    load: (id: number) => {
      const body = bodies.get(id);
      if (body === undefined) throw new Error(`no chunk ${id}`);
      return body;
    },
  };
}

// JSON values as a snapshot holds them: unicode, long strings (to make chunks), odd keys.
const key = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom('__proto__', 'constructor', 'prototype', '0', '10', ''),
);
const leaf = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ minLength: 200, maxLength: 700 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
const { value: jsonValue } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 6 }),
  object: fc.dictionary(key, tie('value'), { maxKeys: 6 }),
}));
const head = fc.record({
  inputs: fc.record({ json: jsonValue }),
  entities: fc.array(jsonValue, { maxLength: 3 }),
});

function encodeHead(value: Record<string, unknown>, previous?: EncodedNode) {
  const store = chunkStore();
  const encoder = new TreeEncoder(component, store.sink);
  return { ...encoder.encodeRoot(value, previous), store };
}

describe('TreeEncoder', () => {
  it('decodes to a value that serializes exactly like the original, with exact sizes', () => {
    fc.assert(
      fc.property(head, (value) => {
        const { node, body, store } = encodeHead(value);
        const decoded = decodeHead(component, body, store.load);
        expect(JSON.stringify(decoded)).toBe(JSON.stringify(value));
        expect(JSON.stringify(decoded, null, 2)).toBe(JSON.stringify(value, null, 2));
        expect(node.bytes).toBe(utf8Length(JSON.stringify(value)));
        const entities = node.children![node.keys!.indexOf('entities')]!;
        value.entities.forEach((entity, index) => {
          expect(prettyBytes(entities.children![index]!)).toBe(
            Buffer.byteLength(JSON.stringify(entity, null, 2)),
          );
        });
      }),
      { numRuns: 300 },
    );
  });

  it('keeps a "__proto__" key an own property and never touches a prototype', () => {
    const value = {
      inputs: { json: JSON.parse('{"__proto__": {"polluted": "yes"}, "x": 1}') },
      entities: [],
    };
    const { body, store } = encodeHead(value);
    const decoded = decodeHead(component, body, store.load) as { inputs: { json: Record<string, unknown> } };
    expect(Object.getOwnPropertyDescriptor(decoded.inputs.json, '__proto__')?.value).toEqual({
      polluted: 'yes',
    });
    expect(Object.getPrototypeOf(decoded.inputs.json)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('serializes what JSON.stringify would: undefined members left out, Dates through toJSON', () => {
    const value = {
      inputs: {
        json: { when: new Date('2026-01-01T00:00:00.000Z'), gone: undefined, list: [undefined, () => 1] },
      },
      entities: [],
    };
    const { body, store } = encodeHead(value);
    expect(JSON.stringify(decodeHead(component, body, store.load))).toBe(JSON.stringify(value));
  });

  it('re-encoding against the previous tree stores only the changed values and their ancestors', () => {
    const tasks = Array.from({ length: 50 }, (_, index) => ({
      id: index,
      output: `output ${index} `.repeat(40),
    }));
    const first = encodeHead({ inputs: { json: {} }, entities: [{ data: { tasks, step: 1 } }] });
    const changed = tasks.map((task) => ({ ...task }));
    changed[7] = { ...changed[7]!, output: 'a new output '.repeat(40) };
    const store = chunkStore();
    const encoder = new TreeEncoder(component, store.sink);
    const second = encoder.encodeRoot(
      { inputs: { json: {} }, entities: [{ data: { tasks: changed, step: 1 } }] },
      first.node,
    );
    // The new output, task 7, the tasks array, and data (the entity is small enough to sit in place).
    const written = [...store.bodies.values()];
    expect(written.length).toBeLessThanOrEqual(4);
    expect(written.reduce((sum, body) => sum + body.length, 0)).toBeLessThan(1500);
    expect(first.node.bytes).toBeGreaterThan(20_000);
    // Unchanged: nothing at all is written.
    const again = new TreeEncoder(component, store.sink).encodeRoot(
      { inputs: { json: {} }, entities: [{ data: { tasks: changed, step: 1 } }] },
      second.node,
    );
    expect(again.node).toBe(second.node);
    expect(store.bodies.size).toBe(written.length);
  });

  it('diffs any change exactly: decoding the second encoding gives the second value', () => {
    fc.assert(
      fc.property(head, head, (before, after) => {
        const store = chunkStore();
        const encoder = new TreeEncoder(component, store.sink);
        const first = encoder.encodeRoot(before, undefined);
        const second = encoder.encodeRoot(after, first.node);
        expect(JSON.stringify(decodeHead(component, second.body, store.load))).toBe(JSON.stringify(after));
        expect(second.node.bytes).toBe(utf8Length(JSON.stringify(after)));
      }),
      { numRuns: 200 },
    );
  });

  it('diffs edits that keep every key exactly, edit after edit (containers redo only what changed)', () => {
    // Replaces one member somewhere inside `value` (keys and lengths stay): `pick` chooses the way down.
    const replaceSomewhere = (value: unknown, pick: number, leafValue: unknown): unknown => {
      if (value === null || typeof value !== 'object') return leafValue;
      const copy: Record<string, unknown> | unknown[] = Array.isArray(value) ? [...value] : { ...value };
      const keys = Object.keys(copy);
      if (keys.length === 0) return copy;
      const key = keys[pick % keys.length]!;
      const member = (copy as Record<string, unknown>)[key];
      (copy as Record<string, unknown>)[key] =
        pick % 3 === 0 ? leafValue : replaceSomewhere(member, Math.floor(pick / 3), leafValue);
      return copy;
    };
    fc.assert(
      fc.property(
        head,
        fc.array(fc.tuple(fc.nat(), leaf), { minLength: 1, maxLength: 6 }),
        (start, edits) => {
          const store = chunkStore();
          const encoder = new TreeEncoder(component, store.sink, undefined, { segmentArrays: true });
          let value = start as unknown as Record<string, unknown>;
          let previous = encoder.encodeRoot(value, undefined).node;
          for (const [pick, leafValue] of edits) {
            value = replaceSomewhere(value, pick, leafValue) as Record<string, unknown>;
            const encoded = encoder.encodeRoot(value, previous);
            expect(JSON.stringify(decodeHead(component, encoded.body, store.load))).toBe(
              JSON.stringify(value),
            );
            expect(encoded.node.bytes).toBe(utf8Length(JSON.stringify(value)));
            expect(prettyBytes(encoded.node)).toBe(utf8Length(JSON.stringify(value, null, 2)));
            previous = encoded.node;
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('seeds from stored chunks a tree that re-encodes the same value without writing anything', () => {
    fc.assert(
      fc.property(head, (value) => {
        const { body, store } = encodeHead(value);
        const seeded = seedHead(component, body, store.load);
        const before = store.bodies.size;
        const again = new TreeEncoder(component, store.sink).encodeRoot(value, seeded);
        expect(store.bodies.size).toBe(before);
        expect(again.body).toBe(body);
      }),
      { numRuns: 200 },
    );
  });

  it('lists the chunks a body refers to, including those of nodes written in place', () => {
    const value = {
      inputs: { json: {} },
      entities: [{ kind: 'crew', data: { long: 'x'.repeat(300), list: ['y'.repeat(300), 42] } }],
    };
    const { body, store } = encodeHead(value);
    const reachable = new Set<number>();
    const pending = referencedChunks(component, body);
    while (pending.length > 0) {
      const id = pending.pop()!;
      reachable.add(id);
      const chunk = store.load(id);
      if (chunk.startsWith('n')) pending.push(...referencedChunks(component, chunk.slice(1)));
    }
    expect([...reachable].sort()).toEqual([...store.bodies.keys()].sort());
  });

  it('refuses damaged stored trees with a typed corrupt_checkpoint error', () => {
    const { body, store } = encodeHead({ inputs: { json: { text: 'z'.repeat(400) } }, entities: [] });
    expect(() => decodeHead(component, body.slice(0, 10), store.load)).toThrow(/not valid JSON/);
    expect(() => decodeHead(component, body.slice(0, 10), store.load)).toThrow(
      expect.objectContaining({
        code: 'corrupt_checkpoint',
        component,
        details: { damaged: expect.stringContaining('not valid JSON') },
      }),
    );
    expect(() => decodeHead(component, '{"inputs":"bare"}', store.load)).toThrow(/neither a chunk id/);
    expect(() => decodeHead(component, '{"inputs":99999}', store.load)).toThrow(/no chunk/);
    const cyclic = chunkStore();
    cyclic.sink('n[1]');
    expect(() => decodeHead(component, '{"inputs":1}', cyclic.load)).toThrow(/too deeply/);
  });

  it('finds a root body only in a head chunk, and names the provider in what it refuses', () => {
    const { body, store } = encodeHead({ inputs: { json: { text: 'y'.repeat(400) } }, entities: [] });
    const root = store.sink(`n${body}`);
    expect(headBody(component, root, store.load)).toBe(body);
    const value = store.sink('v"not a head"');
    expect(() => headBody(component, value, store.load)).toThrow(
      expect.objectContaining({
        code: 'corrupt_checkpoint',
        component,
        message: expect.stringMatching(/does not hold a head/),
      }),
    );
    expect(() =>
      new TreeEncoder(component, store.sink).encodeRoot({ inputs: { json: { count: 1n } } }, undefined),
    ).toThrow(
      expect.objectContaining({
        code: 'invalid_argument',
        component,
        message: expect.stringMatching(/BigInt/),
      }),
    );
  });
});

describe('TreeEncoder and subtrees the writing run settled', () => {
  it('reuses the node of the very same settled object without reading it again', () => {
    // A getter that counts reads shows whether the walk looks inside the object again.
    let reads = 0;
    const output = 'finished work '.repeat(40);
    const settled = new SettledValues();
    const done = settled.settle(
      Object.defineProperty({ id: 1 }, 'output', {
        enumerable: true,
        get: () => {
          reads += 1;
          return output;
        },
      }),
    );
    const store = chunkStore();
    const encoder = new TreeEncoder(component, store.sink);
    const first = encoder.encodeRoot(
      { inputs: { json: {} }, entities: [{ tasks: [done, { id: 2 }] }] },
      undefined,
      settled,
    );
    const readsAfterFirst = reads;
    const second = encoder.encodeRoot(
      { inputs: { json: {} }, entities: [{ tasks: [done, { id: 3 }] }] },
      first.node,
      settled,
    );
    expect(reads).toBe(readsAfterFirst);
    const tasksOf = (node: typeof first.node) => node.children![1]!.children![0]!.children![0]!.children!;
    expect(tasksOf(second.node)[0]).toBe(tasksOf(first.node)[0]);
    expect(JSON.stringify(decodeHead(component, second.body, store.load))).toBe(
      JSON.stringify({ inputs: { json: {} }, entities: [{ tasks: [{ id: 1, output }, { id: 3 }] }] }),
    );
  });

  it('after a changed member, reuses the same settled objects unread and walks unsettled ones again', () => {
    let reads = 0;
    const settled = new SettledValues();
    const done = settled.settle(
      Object.defineProperty({ id: 1 }, 'output', {
        enumerable: true,
        get: () => {
          reads += 1;
          return 'finished work '.repeat(40);
        },
      }),
    );
    // Not settled: the same object, changed in place between the two writes.
    const running = { id: 2, status: 'running', notes: ['first'] };
    const head = (step: number) => ({
      inputs: { json: {} },
      entities: [{ step, tasks: [step, done, running], byName: { step, done, running } }],
    });
    const store = chunkStore();
    const encoder = new TreeEncoder(component, store.sink);
    const first = encoder.encodeRoot(head(1), undefined, settled);
    const readsAfterFirst = reads;
    running.status = 'completed';
    running.notes.push('second');
    const second = encoder.encodeRoot(head(2), first.node, settled);
    expect(reads).toBe(readsAfterFirst);
    const entity = (node: EncodedNode) => node.children![1]!.children![0]!;
    expect(entity(second.node).children![1]!.children![1]).toBe(
      entity(first.node).children![1]!.children![1],
    );
    expect(entity(second.node).children![2]!.children![1]).toBe(
      entity(first.node).children![2]!.children![1],
    );
    const expected = JSON.parse(JSON.stringify(head(2)));
    expect(decodeHead(component, second.body, store.load)).toEqual(expected);
  });

  it('walks an object its run did not settle again, even the same object (it may have changed)', () => {
    const task = { id: 1, status: 'running' };
    const store = chunkStore();
    const encoder = new TreeEncoder(component, store.sink);
    const first = encoder.encodeRoot({ inputs: { json: {} }, entities: [{ task }] }, undefined);
    task.status = 'completed';
    const second = encoder.encodeRoot({ inputs: { json: {} }, entities: [{ task }] }, first.node);
    expect(JSON.stringify(decodeHead(component, second.body, store.load))).toContain('"completed"');
  });
});

describe('TreeEncoder with long arrays in segments', () => {
  const task = (index: number, status: string) => ({
    id: index,
    status,
    output: `output ${index} `.repeat(30),
  });
  const head = (tasks: unknown[]) => ({ inputs: { json: {} }, entities: [{ data: { tasks } }] });

  it('rewrites one segment and the list of segments when one member changes, and reads back the same value', () => {
    const store = chunkStore();
    const encoder = new TreeEncoder(component, store.sink, undefined, { segmentArrays: true });
    const tasks = Array.from({ length: 200 }, (_, index) => task(index, 'pending'));
    const first = encoder.encodeRoot(head(tasks), undefined);
    expect([...store.bodies.values()].some((body) => body.startsWith('s['))).toBe(true);
    const before = store.bodies.size;
    const changed = [...tasks];
    changed[150] = task(150, 'completed');
    const second = encoder.encodeRoot(head(changed), first.node);
    const written = [...store.bodies.entries()].filter(([id]) => id > before).map(([, body]) => body);
    // The changed task, its segment, the list of segments, and the ancestors: not the 200 ids again.
    expect(written.reduce((total, body) => total + body.length, 0)).toBeLessThan(1200);
    expect(written.some((body) => body.startsWith('s['))).toBe(true);
    expect(decodeHead(component, second.body, store.load)).toEqual(head(changed));
    expect(second.node.bytes).toBe(utf8Length(JSON.stringify(head(changed))));
  });

  it('rebuilds the segments of a stored head, so a later write reuses its unchanged segments', () => {
    const store = chunkStore();
    const writer = new TreeEncoder(component, store.sink, undefined, { segmentArrays: true });
    const tasks = Array.from({ length: 100 }, (_, index) => task(index, 'pending'));
    const first = writer.encodeRoot(head(tasks), undefined);
    const seeded = seedHead(component, first.body, store.load);
    const before = store.bodies.size;
    const changed = [...tasks, task(100, 'pending')];
    const second = writer.encodeRoot(head(changed), seeded);
    const written = [...store.bodies.values()].slice(before);
    expect(written.filter((body) => body.startsWith('n[')).length).toBe(1);
    expect(decodeHead(component, second.body, store.load)).toEqual(head(changed));
    const unchanged = writer.encodeRoot(head(changed), second.node);
    expect(unchanged.body).toBe(second.body);
  });
});

describe('TreeEncoder with segments, on any long arrays', () => {
  const longArray = fc.array(fc.oneof(leaf, fc.dictionary(key, leaf, { maxKeys: 3 })), {
    minLength: 30,
    maxLength: 140,
  });
  const longHead = fc.record({
    inputs: fc.record({ json: jsonValue }),
    entities: fc.array(fc.record({ items: longArray, other: jsonValue }), { maxLength: 2 }),
  });
  const segmented = (store: ReturnType<typeof chunkStore>) =>
    new TreeEncoder(component, store.sink, undefined, { segmentArrays: true });

  it('diffs any change exactly, and a seeded tree re-encodes the same value without writing anything', () => {
    fc.assert(
      fc.property(longHead, longHead, (before, after) => {
        const store = chunkStore();
        const first = segmented(store).encodeRoot(before, undefined);
        expect(JSON.stringify(decodeHead(component, first.body, store.load))).toBe(JSON.stringify(before));
        const second = segmented(store).encodeRoot(after, first.node);
        expect(JSON.stringify(decodeHead(component, second.body, store.load))).toBe(JSON.stringify(after));
        expect(second.node.bytes).toBe(utf8Length(JSON.stringify(after)));
        expect(prettyBytes(second.node)).toBe(utf8Length(JSON.stringify(after, null, 2)));
        const seeded = seedHead(component, second.body, store.load);
        const count = store.bodies.size;
        expect(segmented(store).encodeRoot(after, seeded).body).toBe(second.body);
        expect(store.bodies.size).toBe(count);
      }),
      { numRuns: 150 },
    );
  });
});
