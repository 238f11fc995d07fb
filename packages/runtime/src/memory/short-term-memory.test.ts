import { type BaseEvent, CrewlineError, EventBus, eventBus } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { ShortTermMemory } from './short-term-memory.js';

function collect() {
  const events: BaseEvent[] = [];
  return { events, emit: (_source: unknown, event: BaseEvent) => events.push(event) };
}

describe('ShortTermMemory', () => {
  it('finds earlier task results by keywords, best match first', () => {
    const memory = new ShortTermMemory({ emit: () => {} });
    memory.save('The market for electric bicycles grew 30% in Europe last year.', { task: 'research' });
    memory.save('Our launch budget is 40,000 euros for the spring campaign.', { task: 'budget' });
    memory.save('Competitors sell electric scooters mostly in cities.', { task: 'competitors' });
    const results = memory.search('electric bicycles market', 2);
    expect(results).toHaveLength(2);
    expect(results[0]!.metadata).toEqual({ task: 'research' });
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score);
    expect(memory.search('budget', 5).map((item) => item.metadata.task)).toEqual(['budget']);
    expect(memory.search('   ')).toEqual([]);
    expect(memory.search('nothing-like-this-anywhere')).toEqual([]);
  });

  it('emits save and query events with the memory context', () => {
    const { events, emit } = collect();
    const memory = new ShortTermMemory({ emit, context: { taskId: 't1' } });
    memory.save('alpha beta', { n: 1 });
    memory.search('alpha');
    expect(events.map((event) => event.type)).toEqual([
      'memory_save_started',
      'memory_save_completed',
      'memory_query_started',
      'memory_query_completed',
    ]);
    expect(events.every((event) => event.context.taskId === 't1' && event.source?.kind === 'memory')).toBe(
      true,
    );
    expect((events[3] as BaseEvent & { results: string[] }).results).toEqual(['alpha beta']);
  });

  it('refuses an empty text with a failed event and a typed error', () => {
    const { events, emit } = collect();
    const memory = new ShortTermMemory({ emit });
    expect(() => memory.save('  ')).toThrow(CrewlineError);
    expect(events.map((event) => event.type)).toEqual(['memory_save_started', 'memory_save_failed']);
  });

  it('keeps one item for the same text and metadata (a resumed run saving again)', () => {
    const memory = new ShortTermMemory({ emit: () => {} });
    const first = memory.save('result of task 1', { task: 1 });
    const again = memory.save('result of task 1', { task: 1 });
    memory.save('result of task 1', { task: 2 });
    expect(again.id).toBe(first.id);
    expect(memory.size).toBe(2);
  });

  it('round-trips through JSON text and stays searchable, odd metadata keys included', () => {
    const memory = new ShortTermMemory({ emit: () => {} });
    memory.save('Quarterly revenue was 2.4 million', { task: 'finance', when: new Date(0) });
    memory.save(
      'Hiring plan adds four engineers',
      JSON.parse('{"__proto__": {"polluted": true}, "constructor": 1}'),
    );
    const text = JSON.stringify(memory);
    const restored = ShortTermMemory.fromJSON(JSON.parse(text), { emit: () => {} });
    expect(restored.toJSON()).toEqual(memory.toJSON());
    expect(restored.search('revenue')[0]!.metadata).toEqual({
      task: 'finance',
      when: '1970-01-01T00:00:00.000Z',
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(restored.items()[1]!.metadata)).toBe(Object.prototype);
  });

  it('rejects a damaged snapshot with a corrupt_checkpoint error naming the field', () => {
    const error = (() => {
      try {
        ShortTermMemory.fromJSON({ kind: 'short-term-memory', version: 1, items: [{ id: 1 }] });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(CrewlineError.hasCode(error, 'corrupt_checkpoint')).toBe(true);
    expect((error as Error).message).toContain('items.0.id');
    expect(() => ShortTermMemory.fromJSON(null)).toThrow(/not valid/);
  });

  it('emits on the process bus by default and can be bound to another emitter', () => {
    const seen: string[] = [];
    const off = eventBus.onAny((_source: unknown, event: BaseEvent) => {
      seen.push(event.type);
    });
    const memory = new ShortTermMemory();
    memory.save('default bus');
    off();
    expect(seen).toEqual(['memory_save_started', 'memory_save_completed']);
    const bus = new EventBus();
    const other: string[] = [];
    bus.onAny((_source: unknown, event: BaseEvent) => {
      other.push(event.type);
    });
    memory.bind({ emit: (source, event) => bus.emit(source, event) }).search('default');
    expect(other).toEqual(['memory_query_started', 'memory_query_completed']);
  });
});
