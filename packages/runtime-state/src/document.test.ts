import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { type Migration, upgradeDocument, validateDocument } from './document.js';
import { parseDocumentText } from './document-text.js';
import { MAX_NESTING_DEPTH } from './nesting-depth.js';
import type { CheckpointProvider } from './provider.js';
import { readDocument } from './reference.js';
import { RuntimeState } from './runtime-state.js';
import { FakeCrew } from './test-support/fake-crew.js';
import { InMemoryProvider } from './testing/in-memory-provider.js';

async function sampleText(): Promise<string> {
  const provider = new InMemoryProvider();
  const state = new RuntimeState({
    provider,
    location: 'mem',
    entities: [new FakeCrew()],
    inputs: { topic: 'AI' },
  });
  const reference = state.checkpoint();
  const raw = await provider.read('mem', reference.split('#')[1]!);
  return 'text' in raw ? raw.text : '';
}

function codeOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    if (CrewlineError.isInstance(error)) return error.code;
    throw error;
  }
  return 'no error';
}

describe('checkpoint documents', () => {
  it('writes human-readable text that validates back', async () => {
    const text = await sampleText();
    const lines = text.split('\n');
    expect(lines[0]).toContain('"format": "crewline.checkpoint"');
    expect(lines[1]).toMatch(/^"metadata": \{"id":/);
    const document = validateDocument(parseDocumentText(text));
    expect(document.metadata.entities[0]).toMatchObject({
      kind: 'crew',
      name: 'research-crew',
      completed: 0,
      total: 2,
    });
  });

  it('refuses truncated, oversized, non-object and __proto__-laden text with typed errors', async () => {
    const text = await sampleText();
    expect(codeOf(() => parseDocumentText(text.slice(0, text.length / 2)))).toBe('corrupt_checkpoint');
    expect(codeOf(() => parseDocumentText(text, { maxBytes: 100 }))).toBe('too_large');
    expect(codeOf(() => validateDocument(parseDocumentText('[1,2]')))).toBe('corrupt_checkpoint');
    const poisoned = text.replace('"inputs": {', '"inputs": {"__proto__": {"polluted": 1}, ');
    expect(codeOf(() => parseDocumentText(poisoned))).toBe('corrupt_checkpoint');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses a __proto__ key however it is spelled and wherever it is, also when read from a provider', async () => {
    const text = await sampleText();
    // An escaped spelling is the same key to JSON.parse; deep inside entity data as at the top.
    const spellings = ['"__proto__"', '"\\u005f_proto__"', '"\\u005F\\u005Fproto\\u005F\\u005F"'];
    for (const key of spellings) {
      for (const poisoned of [
        text.replace('"inputs": {', `"inputs": {${key}: {"polluted": 1}, `),
        text.replace('"data": {', `"data": {"deep": [[{"a": {${key}: {"polluted": 1}}}]], `),
      ]) {
        expect(poisoned).not.toBe(text);
        expect(codeOf(() => parseDocumentText(poisoned))).toBe('corrupt_checkpoint');
        const provider = { read: async () => ({ text: poisoned }) } as unknown as CheckpointProvider;
        await expect(readDocument(provider, 'mem', 'x')).rejects.toMatchObject({
          code: 'corrupt_checkpoint',
          message: expect.stringContaining('"__proto__" key'),
        });
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }
    }
  });

  it('refuses a document object holding values JSON cannot hold, naming where', async () => {
    for (const bad of [undefined, Number.NaN, Number.POSITIVE_INFINITY, () => 1, 10n, Symbol('s')]) {
      const document = parseDocumentText(await sampleText()) as Record<string, any>;
      document.entities[0].data.extra = { list: [1, bad] };
      let refusal: unknown;
      try {
        validateDocument(document);
      } catch (error) {
        refusal = error;
      }
      expect(CrewlineError.isInstance(refusal), String(bad)).toBe(true);
      expect((refusal as CrewlineError).code).toBe('corrupt_checkpoint');
      expect((refusal as Error).message).toContain('entities.0.data.extra.list.1');
    }
  });

  it("reads a provider's text with the same refusals as parseDocumentText then validateDocument", async () => {
    const text = await sampleText();
    const deep = text.replace(
      '"inputs": {"json":{',
      `"inputs": {"json":{"deep": ${'['.repeat(2000)}1${']'.repeat(2000)}, `,
    );
    const provider = (body: string) =>
      ({ read: async () => ({ text: body }) }) as unknown as CheckpointProvider;
    await expect(readDocument(provider(deep), 'mem', 'x')).rejects.toMatchObject({
      code: 'too_large',
      message: expect.stringContaining('inputs.json.deep'),
    });
    await expect(readDocument(provider(text.slice(0, 200)), 'mem', 'x')).rejects.toMatchObject({
      code: 'corrupt_checkpoint',
    });
    await expect(readDocument(provider(text), 'mem', 'x', { maxBytes: 100 })).rejects.toMatchObject({
      code: 'too_large',
    });
    expect(await readDocument(provider(text), 'mem', 'x')).toEqual(validateDocument(parseDocumentText(text)));
  });

  it('refuses kickoff inputs that are not an object of names to values', async () => {
    for (const json of ['just a string', ['a', 'list'], 42, null]) {
      const document = parseDocumentText(await sampleText()) as Record<string, any>;
      document.inputs = { json };
      expect(() => validateDocument(document)).toThrow(
        /inputs\.json: must be an object of input names to values/,
      );
    }
  });

  it('refuses lineage ids that could escape a path or break a line', async () => {
    for (const lineageId of [
      '../../etc',
      'a/b',
      'nul\u0000id',
      'line\nbreak',
      '',
      '.hidden',
      'x'.repeat(300),
    ]) {
      const document = parseDocumentText(await sampleText()) as Record<string, any>;
      document.metadata.lineageId = lineageId;
      expect(
        codeOf(() => validateDocument(document)),
        JSON.stringify(lineageId),
      ).toBe('corrupt_checkpoint');
    }
    const document = parseDocumentText(await sampleText()) as Record<string, any>;
    expect(() =>
      validateDocument({ ...document, metadata: { ...document.metadata, lineageId: 'a/b' } }),
    ).toThrow(/metadata\.lineageId: must be a lineage id/);
  });

  it('names the field at fault when a document is wrong-typed', async () => {
    const document = parseDocumentText(await sampleText()) as Record<string, any>;
    document.metadata.eventCount = 'many';
    try {
      validateDocument(document);
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toContain('metadata.eventCount');
    }
  });

  it('names the event at fault, and keeps the events it accepts as they were read', async () => {
    const withEvents = (parsed: Record<string, any>) => {
      parsed.events = [0, 1].map((sequence) => ({
        type: 'task_started',
        eventId: `event-${sequence}`,
        sequence,
        timestamp: '2026-01-02T03:04:05.678Z',
        payload: { description: 'a task' },
      }));
      return parsed;
    };
    const text = JSON.stringify(withEvents(parseDocumentText(await sampleText()) as Record<string, any>));
    const wrong: [string, (event: Record<string, any>) => void][] = [
      ['events.0.type', (event) => (event.type = '')],
      ['events.0.eventId', (event) => (event.eventId = 'x'.repeat(201))],
      ['events.0.sequence', (event) => (event.sequence = -1)],
      ['events.0.sequence', (event) => (event.sequence = 1.5)],
      ['events.0.timestamp', (event) => delete event.timestamp],
    ];
    for (const [path, damage] of wrong) {
      const document = parseDocumentText(text) as Record<string, any>;
      expect(document.events.length).toBeGreaterThan(0);
      damage(document.events[0]);
      expect(() => validateDocument(document), path).toThrow(new RegExp(`checkpoint is invalid: ${path}`));
    }
    const document = parseDocumentText(text) as Record<string, any>;
    document.events[0] = 'not an event';
    expect(codeOf(() => validateDocument(document))).toBe('corrupt_checkpoint');
    const sound = parseDocumentText(text) as Record<string, any>;
    const events = validateDocument(sound).events;
    expect(events).toEqual(sound.events);
    expect(events[1]).toHaveProperty('payload', { description: 'a task' });
  });

  it('refuses nesting past MAX_NESTING_DEPTH with a typed error naming the field, whatever the depth', async () => {
    const nested = (levels: number, open: string, close: string) =>
      `${open.repeat(levels)}1${close.repeat(levels)}`;
    // Arrays and objects, just past the limit and far past where recursive validation overflows.
    for (const [levels, open, close] of [
      [MAX_NESTING_DEPTH - 2, '[', ']'],
      [2000, '[', ']'],
      [2000, '{"a":', '}'],
      [20000, '[', ']'],
    ] as const) {
      const text = (await sampleText()).replace(
        '"inputs": {"json":{',
        `"inputs": {"json":{"deep": ${nested(levels, open, close)}, `,
      );
      let refusal: unknown;
      try {
        validateDocument(parseDocumentText(text));
      } catch (error) {
        refusal = error;
      }
      expect(CrewlineError.isInstance(refusal), `${levels} levels of ${open}: ${String(refusal)}`).toBe(true);
      expect((refusal as CrewlineError).code).toBe('too_large');
      expect((refusal as Error).message).toContain(`nested more than ${MAX_NESTING_DEPTH} levels deep`);
      expect((refusal as Error).message).toContain('inputs.json.deep');
    }
    // The limit itself is accepted (the document, inputs and inputs.json are three levels).
    const text = (await sampleText()).replace(
      '"inputs": {"json":{',
      `"inputs": {"json":{"deep": ${nested(MAX_NESTING_DEPTH - 3, '[', ']')}, `,
    );
    expect(validateDocument(parseDocumentText(text)).inputs.json).toHaveProperty('deep');
  });

  it('refuses a newer format version and an unknown format', async () => {
    const document = parseDocumentText(await sampleText()) as Record<string, unknown>;
    expect(codeOf(() => validateDocument({ ...document, formatVersion: 99 }))).toBe('unsupported_version');
    expect(codeOf(() => validateDocument({ ...document, format: 'other' }))).toBe('corrupt_checkpoint');
  });

  it('a newer format version names the checkpoint, where it came from, and the fix', async () => {
    const document = parseDocumentText(await sampleText()) as { metadata: { id: string } };
    expect(() =>
      validateDocument({ ...document, formatVersion: 99 }, undefined, '/data/main/x.json'),
    ).toThrow(
      `checkpoint "${document.metadata.id}" (/data/main/x.json): format version 99 is newer than this crewline understands (1)`,
    );
    expect(() => validateDocument({ ...document, formatVersion: 99 })).toThrow(/; upgrade crewline \(/);
  });

  it('upgrades old versions step by step with pure functions', () => {
    const migrations: Record<number, Migration> = {
      1: (document) => ({ ...document, renamed: document.old, old: undefined }),
      2: (document) => ({ ...document, added: true }),
    };
    const upgraded = upgradeDocument({ formatVersion: 1, old: 'x' }, migrations, 3);
    expect(upgraded).toEqual({ formatVersion: 3, renamed: 'x', old: undefined, added: true });
    expect(codeOf(() => upgradeDocument({ formatVersion: 0 }, migrations, 3))).toBe('unsupported_version');
  });
});

describe('checkpoint bytes', () => {
  it('are exactly the UTF-8 encoding of the text, with and without events, across writes', async () => {
    const { createCheckpointWrite } = await import('./checkpoint-write.js');
    const { encodeValue } = await import('./value-codec.js');
    const eventTexts: (string | undefined)[] = [];
    const eventBytes: (Buffer | undefined)[] = [];
    const events = [
      { type: 'task_started', eventId: 'a', sequence: 1, timestamp: 't', note: 'ünïcødé ✓' },
      { type: 'task_completed', eventId: 'b', sequence: 2, timestamp: 't', output: 'line\nbreak' },
    ];
    const metadata = {
      id: '20261121T000000000-aaaaaaaa',
      createdAt: new Date(0).toISOString(),
      lineageId: 'l',
      parentId: null,
      branch: 'main',
      trigger: 'manual',
      entities: [],
      eventCount: 0,
    };
    for (const count of [0, 1, 2]) {
      const write = createCheckpointWrite({
        metadata: { ...metadata, eventCount: count },
        inputs: encodeValue({ topic: 'é' }),
        entities: [{ kind: 'crew', id: 'c', name: 'n', data: { x: 'ß' } }],
        events: events.slice(0, count),
        parentEventCount: 0,
        eventTexts,
        eventBytes,
      });
      // The pieces first (a writer that gathers them never builds the whole buffer), then the whole.
      const pieces = write.byteChunks!();
      const bytes = write.bytes();
      expect(Buffer.concat(pieces).equals(bytes)).toBe(true);
      expect(bytes.equals(Buffer.from(write.text(), 'utf8'))).toBe(true);
      expect(validateDocument(parseDocumentText(bytes.toString('utf8'))).events).toHaveLength(count);
    }
  });

  it('hand out the event lines the run encoded once: the same buffers in every later checkpoint', async () => {
    const { createCheckpointWrite } = await import('./checkpoint-write.js');
    const { encodeValue } = await import('./value-codec.js');
    const eventTexts: (string | undefined)[] = [];
    const eventBytes: (Buffer | undefined)[] = [];
    const events = [1, 2, 3].map((sequence) => ({
      type: 'task_started',
      eventId: `e${sequence}`,
      sequence,
      timestamp: 't',
    }));
    const writeOf = (count: number) =>
      createCheckpointWrite({
        metadata: {
          id: `20261121T00000000${count}-aaaaaaaa`,
          createdAt: new Date(0).toISOString(),
          lineageId: 'l',
          parentId: null,
          branch: 'main',
          trigger: 'manual',
          entities: [],
          eventCount: count,
        },
        inputs: encodeValue({}),
        entities: [],
        events: events.slice(0, count),
        parentEventCount: 0,
        eventTexts,
        eventBytes,
      });
    const earlier = writeOf(3).byteChunks!();
    const later = writeOf(3).byteChunks!();
    // Head, three event lines, end: the event lines are the very same buffers.
    expect(later).toHaveLength(5);
    for (const index of [1, 2]) expect(later[index]).toBe(earlier[index]);
    // The last line is a view of the cached line (its separator left out), not a copy.
    expect(later[3]!.buffer).toBe(earlier[3]!.buffer);
    expect(Buffer.concat(later).toString('utf8')).toBe(writeOf(3).text());
  });
});
