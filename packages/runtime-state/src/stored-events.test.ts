import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_FORMAT_VERSION, validateParsedDocument } from './document.js';
import { parseDocumentText } from './document-text.js';
import { MAX_NESTING_DEPTH } from './nesting-depth.js';
import { RuntimeState } from './runtime-state.js';
import { FakeCrew } from './test-support/fake-crew.js';
import { InMemoryProvider } from './testing/in-memory-provider.js';

/** A written checkpoint's document split as a provider that stores structure hands it over. */
async function storedParts(): Promise<{ document: Record<string, unknown>; lines: string[] }> {
  const provider = new InMemoryProvider();
  const state = new RuntimeState({ provider, location: 'mem', entities: [new FakeCrew()], inputs: {} });
  const reference = state.checkpoint();
  const raw = await provider.read('mem', reference.split('#')[1]!);
  const { events: _written, ...document } = parseDocumentText('text' in raw ? raw.text : '') as Record<
    string,
    unknown
  >;
  const lines = [1, 2, 3].map((sequence) =>
    JSON.stringify({
      type: 'task_started',
      eventId: `event-${sequence}`,
      sequence,
      timestamp: '2026-01-01T00:00:00.000Z',
      source: { kind: 'task', id: `task-${sequence}` },
    }),
  );
  return { document, lines };
}

function read(document: Record<string, unknown>, lines: string[]) {
  return validateParsedDocument(document, { jsonValues: true, origin: ' (mem#x)', eventLines: lines });
}

function refusalOf(action: () => unknown): CrewlineError {
  try {
    action();
  } catch (error) {
    if (CrewlineError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('event lines a provider hands over unparsed', () => {
  it('read back as the parsed events, in order, and stay what is assigned', async () => {
    const { document, lines } = await storedParts();
    const validated = read(document, lines);
    expect(validated.events.map((event) => event.eventId)).toEqual(['event-1', 'event-2', 'event-3']);
    expect(validated.events).toBe(validated.events);
    expect(JSON.parse(JSON.stringify(validated)).events).toHaveLength(3);
    validated.events = [];
    expect(validated.events).toEqual([]);
  });

  it('that are damaged give a typed error naming the checkpoint where the events are read', async () => {
    const { document, lines } = await storedParts();
    const damaged: [string, string[], string][] = [
      ['not JSON', [lines[0]!, '{"type":', lines[2]!], 'an event line is not valid JSON'],
      ['two values in a line', [lines[0]!, '1,2'], 'the event lines do not hold one event each'],
      ['not an event record', [lines[0]!, '{"type":"x"}'], 'events.1.eventId'],
      ['a __proto__ key', [`{"__proto__":{"polluted":1},${lines[0]!.slice(1)}`], '"__proto__" key'],
    ];
    for (const [name, eventLines, problem] of damaged) {
      const validated = read(document, eventLines);
      const refusal = refusalOf(() => validated.events);
      expect(refusal.code, name).toBe('corrupt_checkpoint');
      expect(refusal.message, name).toContain(problem);
      expect(refusal.message, name).toContain('(mem#x)');
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('nested too deeply are refused at the depth counted from the document', async () => {
    const { document, lines } = await storedParts();
    // The events list is level 2 and each event level 3: a value inside starts at level 4.
    const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    const withValue = (levels: number) => `${lines[0]!.slice(0, -1)},"deep":${nested(levels)}}`;
    expect(read(document, [withValue(MAX_NESTING_DEPTH - 3)]).events).toHaveLength(1);
    const refusal = refusalOf(() => read(document, [withValue(MAX_NESTING_DEPTH - 2)]).events);
    expect(refusal.code).toBe('too_large');
    expect(refusal.message).toContain('at events.0.deep');
  });

  it('are parsed before a migration, which gets the whole document', async () => {
    const { document, lines } = await storedParts();
    const seen: unknown[] = [];
    const validated = validateParsedDocument(
      { ...document, formatVersion: CHECKPOINT_FORMAT_VERSION - 1 },
      {
        jsonValues: true,
        origin: '',
        eventLines: lines,
        migrations: {
          [CHECKPOINT_FORMAT_VERSION - 1]: (old) => {
            seen.push(old.events);
            return old;
          },
        },
      },
    );
    expect((seen[0] as unknown[]).length).toBe(3);
    expect(validated.events).toHaveLength(3);
  });
});
