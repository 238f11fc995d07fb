import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseStorage, displayPath, resolveReferenceInput, shellQuote } from './storage.js';

describe('chooseStorage', () => {
  it('is literally `checkpoint: true` for JSON in the default place', async () => {
    const storage = await chooseStorage('json', undefined, '/work/project');
    expect(storage).toEqual({
      kind: 'json',
      displayLocation: './.checkpoints',
      location: '/work/project/.checkpoints',
      checkpoint: true,
    });
  });

  it('configures a SqliteProvider for ./.checkpoints.db', async () => {
    const storage = await chooseStorage('sqlite', undefined, '/work/project');
    expect(storage.location).toBe('/work/project/.checkpoints.db');
    const checkpoint = storage.checkpoint as { location: string; provider: { kind: string } };
    expect(checkpoint.location).toBe('/work/project/.checkpoints.db');
    expect(checkpoint.provider.kind).toBe('sqlite');
  });

  it('resolves a given location against the directory the command was typed in', async () => {
    const storage = await chooseStorage('json', 'runs/cp', '/work/project');
    expect(storage.checkpoint).toEqual({ location: join('/work/project', 'runs/cp') });
    expect(storage.displayLocation).toBe('./runs/cp');
  });
});

describe('displayPath', () => {
  it('shows paths inside the base as ./relative and others as absolute, keeping #id', () => {
    expect(displayPath('/base/.checkpoints/main/a.json', '/base')).toBe('./.checkpoints/main/a.json');
    expect(displayPath('/base/.checkpoints.db#2026', '/base')).toBe('./.checkpoints.db#2026');
    expect(displayPath('/elsewhere/x.json', '/base')).toBe('/elsewhere/x.json');
    expect(displayPath('relative/x.json', '/base')).toBe('relative/x.json');
  });
});

describe('shellQuote', () => {
  it('leaves plain words alone and quotes the rest so the printed command can be pasted', () => {
    expect(shellQuote('./.checkpoints.db#20261121T0930')).toBe('./.checkpoints.db#20261121T0930');
    expect(shellQuote('two words')).toBe("'two words'");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });
});

describe('resolveReferenceInput', () => {
  it('resolves paths and database references against the base, and bare ids against the location', () => {
    expect(resolveReferenceInput('./.checkpoints/main/a.json', '/base', '/base/.checkpoints')).toBe(
      '/base/.checkpoints/main/a.json',
    );
    expect(resolveReferenceInput('.checkpoints.db#2026', '/base', '/base/.checkpoints.db')).toBe(
      '/base/.checkpoints.db#2026',
    );
    expect(resolveReferenceInput('20261121T0930', '/base', '/base/.checkpoints')).toBe(
      '/base/.checkpoints#20261121T0930',
    );
    expect(resolveReferenceInput('postgres://db/x#1', '/base', '/base/.checkpoints')).toBe(
      'postgres://db/x#1',
    );
  });
});
