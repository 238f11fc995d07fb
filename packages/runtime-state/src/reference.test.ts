import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { detectProviderKind, resolveReference } from './reference.js';
import { RuntimeState } from './runtime-state.js';
import { InMemoryProvider } from './testing/in-memory-provider.js';

describe('detectProviderKind', () => {
  const directory = mkdtempSync(join(tmpdir(), 'crewline-reference-'));
  const database = join(directory, 'store.bin');
  writeFileSync(database, Buffer.concat([Buffer.from('SQLite format 3\u0000', 'latin1'), Buffer.alloc(100)]));
  mkdirSync(join(directory, 'json'));

  it('tells Postgres URLs, SQLite files and JSON locations apart', () => {
    expect(detectProviderKind('postgres://user@host/db#abc')).toBe('postgres');
    expect(detectProviderKind('postgresql://host/db')).toBe('postgres');
    expect(detectProviderKind(database)).toBe('sqlite');
    expect(detectProviderKind(`${database}#someid`)).toBe('sqlite');
    expect(detectProviderKind('./missing.db')).toBe('sqlite');
    expect(detectProviderKind(join(directory, 'json'))).toBe('json');
    mkdirSync(join(directory, 'named.db'));
    expect(detectProviderKind(join(directory, 'named.db'))).toBe('json');
    expect(detectProviderKind(`${join(directory, 'json')}#someid`)).toBe('json');
    expect(detectProviderKind(join(directory, 'json', 'main', 'x.json'))).toBe('json');
  });

  it('says which package to install when a provider is missing', async () => {
    await expect(resolveReference(database, {})).rejects.toThrow(/install @crewline\/provider-sqlite/);
  });
});

describe('resolveReference', () => {
  const provider = new InMemoryProvider();
  const catalog = { sqlite: () => provider, json: () => provider };
  const state = new RuntimeState({ provider, location: 'mem' });
  const first = state.checkpoint();
  const second = state.checkpoint();
  const [, firstId] = first.split('#') as [string, string];
  const [, secondId] = second.split('#') as [string, string];

  it('resolves exact ids, a location as its latest, and unique prefixes when allowed', async () => {
    expect((await resolveReference(first, catalog)).checkpoint.id).toBe(firstId);
    expect((await resolveReference('mem#', catalog)).checkpoint.id).toBe(secondId);
    expect(
      (await resolveReference(`mem#${firstId.slice(0, -3)}`, catalog, { allowPrefix: true })).checkpoint.id,
    ).toBe(firstId);
  });

  it('accepts a unique start of the random part after the time', async () => {
    const suffix = secondId.slice(secondId.lastIndexOf('-') + 1, secondId.lastIndexOf('-') + 7);
    expect((await resolveReference(`mem#${suffix}`, catalog, { allowPrefix: true })).checkpoint.id).toBe(
      secondId,
    );
    const exactOnly = await resolveReference(`mem#${suffix}`, catalog).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(exactOnly, 'not_found')).toBe(true);
  });

  it('reports unknown and ambiguous ids with typed errors', async () => {
    const unknown = await resolveReference('mem#nope', catalog).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(unknown, 'not_found')).toBe(true);
    const sharedPrefix = firstId.slice(0, 4);
    const ambiguous = await resolveReference(`mem#${sharedPrefix}`, catalog, { allowPrefix: true }).catch(
      (error: unknown) => error,
    );
    expect(CrewlineError.hasCode(ambiguous, 'ambiguous_reference')).toBe(true);
  });
});
