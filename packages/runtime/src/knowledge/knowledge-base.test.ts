import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BaseEvent, CrewlineError } from '@crewline/events';
import { afterAll, describe, expect, it } from 'vitest';
import { chunkText } from './chunk-text.js';
import { KnowledgeBase } from './knowledge-base.js';
import { StringKnowledgeSource, TextFileKnowledgeSource } from './knowledge-source.js';

const directory = mkdtempSync(join(tmpdir(), 'crewline-knowledge-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const handbook = [
  'Refunds are accepted within 30 days of purchase when the receipt is shown.',
  'Shipping to Norway takes five working days; express shipping takes two.',
  'Support is open Monday to Friday from 9:00 to 17:00 Central European Time.',
].join('\n\n');

describe('chunkText', () => {
  it('covers the whole text in overlapping chunks no longer than the size', () => {
    const text = Array.from({ length: 200 }, (_, index) => `Sentence number ${index} says something.`).join(
      ' ',
    );
    const chunks = chunkText(text, 300, 50);
    expect(chunks.every((chunk) => chunk.length <= 300)).toBe(true);
    for (const word of ['number 0 ', 'number 100 ', 'number 199 '])
      expect(chunks.some((chunk) => chunk.includes(word))).toBe(true);
    expect(chunks.length).toBeGreaterThan(text.length / 300);
    expect(chunkText('', 100, 10)).toEqual([]);
  });
});

describe('KnowledgeBase', () => {
  it('answers queries from string and file sources, naming where a chunk came from', async () => {
    const path = join(directory, 'shipping.md');
    writeFileSync(path, handbook);
    const knowledge = new KnowledgeBase({
      sources: [
        new StringKnowledgeSource({ content: 'The company was founded in 1998 in Bergen.', name: 'about' }),
        new TextFileKnowledgeSource({ paths: 'shipping.md', cwd: directory }),
      ],
      chunkSize: 100,
      chunkOverlap: 10,
      emit: () => {},
    });
    const [best] = await knowledge.query('how long does shipping to Norway take', 2);
    expect(best!.text).toContain('Shipping to Norway');
    expect(best!.origin).toBe('shipping.md');
    expect((await knowledge.query('founded', 1))[0]!.origin).toBe('about');
    expect(knowledge.chunkCount).toBeGreaterThanOrEqual(4);
  });

  it('emits knowledge query and search events in order', async () => {
    const events: BaseEvent[] = [];
    const knowledge = new KnowledgeBase({
      sources: [new StringKnowledgeSource({ content: handbook })],
      emit: (_source, event) => events.push(event),
      context: { agentRole: 'Support' },
    });
    await knowledge.query('refunds');
    expect(events.map((event) => event.type)).toEqual([
      'knowledge_query_started',
      'knowledge_search_query_started',
      'knowledge_search_query_completed',
      'knowledge_query_completed',
    ]);
    expect(events.every((event) => event.context.agentRole === 'Support')).toBe(true);
    expect((events[3] as BaseEvent & { results: string[] }).results[0]).toContain('Refunds');
  });

  it('fails early and names the path when a knowledge file is missing', () => {
    const error = (() => {
      try {
        new TextFileKnowledgeSource({ paths: ['missing.txt'], cwd: directory });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(CrewlineError.hasCode(error, 'read_failed')).toBe(true);
    expect((error as Error).message).toContain(join(directory, 'missing.txt'));
  });

  it('round-trips through JSON with file contents, so restore never reads the file again', async () => {
    const path = join(directory, 'policy.txt');
    writeFileSync(path, handbook);
    const knowledge = new KnowledgeBase({
      sources: [new TextFileKnowledgeSource({ paths: [path] })],
      chunkSize: 120,
      chunkOverlap: 20,
      emit: () => {},
    });
    const snapshot = JSON.parse(JSON.stringify(knowledge));
    rmSync(path);
    const restored = KnowledgeBase.fromJSON(snapshot, { emit: () => {} });
    expect(restored.toJSON()).toEqual(knowledge.toJSON());
    expect(restored.chunkSize).toBe(120);
    expect((await restored.query('support hours'))[0]!.text).toContain('Support is open');
    expect(() => KnowledgeBase.fromJSON({ ...snapshot, sources: [{ kind: 'url', href: 'x' }] })).toThrow(
      /not valid/,
    );
  });

  it('validates chunk settings', () => {
    expect(() => new KnowledgeBase({ sources: [], chunkSize: 0 })).toThrow(/chunkSize/);
    expect(() => new KnowledgeBase({ sources: [], chunkSize: 10, chunkOverlap: 10 })).toThrow(/chunkOverlap/);
  });
});
