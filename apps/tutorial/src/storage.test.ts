import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { chooseStorage, displayPath, resolveReferenceInput, shellQuote } from './storage.js';

/** Not a real password: what must never appear in anything the demo shows. */
const password = 'S3cretPw';

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
    const checkpoint = storage.checkpoint as { location: string; provider: { kind: string } };
    expect(checkpoint.location).toBe(join('/work/project', 'runs/cp'));
    expect(checkpoint.provider.kind).toBe('json');
    expect(storage.displayLocation).toBe('./runs/cp');
  });

  it('picks the provider a location calls for, as the runtime does: a .db file is SQLite without --sqlite', async () => {
    const storage = await chooseStorage('json', '/tmp/mistake.db', '/work/project');
    expect(storage.kind).toBe('sqlite');
    expect((storage.checkpoint as { provider: { kind: string } }).provider.kind).toBe('sqlite');
    expect(storage.displayLocation).toBe('/tmp/mistake.db');
  });

  it('takes a postgres:// URL as Postgres, and keeps its password out of the location and the display', async () => {
    const url = `postgres://crewline:${password}@127.0.0.1:5432/postgres?schema=demo`;
    const storage = await chooseStorage('json', url, '/work/project');
    expect(storage.kind).toBe('postgres');
    expect(storage.location).toBe('postgres://crewline@127.0.0.1:5432/postgres?schema=demo');
    expect(storage.displayLocation).toBe(storage.location);
    expect(JSON.stringify({ ...storage, checkpoint: undefined })).not.toContain(password);
    expect((storage.checkpoint as { location: string }).location).not.toContain(password);
  });

  it('refuses --sqlite with a location that cannot be a SQLite database, saying what to do', async () => {
    const refusal = (location: string) =>
      chooseStorage('sqlite', location, tmpdir()).then(
        () => undefined,
        (error: unknown) => error,
      );
    const url = await refusal(`postgres://crewline:${password}@127.0.0.1/postgres`);
    expect(CrewlineError.hasCode(url, 'invalid_argument')).toBe(true);
    expect((url as Error).message).toMatch(/not a SQLite database.*drop --sqlite/);
    expect((url as Error).message).not.toContain(password);
    const directory = await refusal(tmpdir());
    expect((directory as Error).message).toMatch(/is a directory \(JSON checkpoints\)/);
  });

  it('still makes a new file a SQLite database with --sqlite, showing the name the provider gives it', async () => {
    const storage = await chooseStorage('sqlite', 'runs/checkpoints', '/work/project');
    expect(storage.kind).toBe('sqlite');
    expect(storage.location).toBe('/work/project/runs/checkpoints.db');
    expect(storage.displayLocation).toBe('./runs/checkpoints.db');
  });
});

describe('displayPath', () => {
  it('shows paths inside the base as ./relative and others as absolute, keeping #id', () => {
    expect(displayPath('/base/.checkpoints/main/a.json', '/base')).toBe('./.checkpoints/main/a.json');
    expect(displayPath('/base/.checkpoints.db#2026', '/base')).toBe('./.checkpoints.db#2026');
    expect(displayPath('/elsewhere/x.json', '/base')).toBe('/elsewhere/x.json');
    expect(displayPath('relative/x.json', '/base')).toBe('relative/x.json');
  });

  it('masks the password of a connection string', () => {
    const shown = displayPath(`postgres://crewline:${password}@127.0.0.1:5432/postgres#2026`, '/base');
    expect(shown).not.toContain(password);
    expect(shown).toMatch(/^postgres:\/\/crewline:.+@127\.0\.0\.1:5432\/postgres#2026$/);
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
