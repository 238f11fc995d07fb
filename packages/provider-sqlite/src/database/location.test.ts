import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTemporaryDatabase, temporaryDatabase } from '../test-support/temporary-database.js';
import { parseDatabaseReference, resolveDatabaseLocation } from './location.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('resolveDatabaseLocation', () => {
  it('appends .db when the file name has no suffix, and only then', () => {
    expect(resolveDatabaseLocation('./.checkpoints')).toBe('./.checkpoints.db');
    expect(resolveDatabaseLocation('runs/checkpoints')).toBe('runs/checkpoints.db');
    expect(resolveDatabaseLocation('my.project/checkpoints')).toBe('my.project/checkpoints.db');
    expect(resolveDatabaseLocation('runs/checkpoints.db')).toBe('runs/checkpoints.db');
    expect(resolveDatabaseLocation('runs/checkpoints.sqlite')).toBe('runs/checkpoints.sqlite');
    expect(resolveDatabaseLocation('state.data')).toBe('state.data');
    expect(resolveDatabaseLocation('./.checkpoints/')).toBe('./.checkpoints.db');
    expect(resolveDatabaseLocation(':memory:')).toBe(':memory:');
  });

  it('is idempotent', () => {
    for (const location of ['./.checkpoints', 'a/b', 'a/b.db', 'x.sqlite3', ':memory:']) {
      const once = resolveDatabaseLocation(location);
      expect(resolveDatabaseLocation(once)).toBe(once);
    }
  });

  it('refuses an empty location or one with a NUL character', () => {
    expect(() => resolveDatabaseLocation('')).toThrow(/location is empty/);
    expect(() => resolveDatabaseLocation('a\u0000b')).toThrow(/NUL/);
  });
});

describe('parseDatabaseReference', () => {
  it('splits db-path#id; a bare database path means its latest', () => {
    expect(parseDatabaseReference('runs/cp.db#20260101T000000000-abcdef01')).toEqual({
      location: 'runs/cp.db',
      id: '20260101T000000000-abcdef01',
    });
    expect(parseDatabaseReference('runs/cp#abc')).toEqual({ location: 'runs/cp.db', id: 'abc' });
    expect(parseDatabaseReference('runs/cp.db')).toEqual({ location: 'runs/cp.db' });
    expect(parseDatabaseReference('runs/cp.sqlite#')).toEqual({ location: 'runs/cp.sqlite' });
  });

  it('claims an existing database file without suffix and a name whose .db file exists', () => {
    const raw = temporaryDatabase();
    cleanups.push(() => removeTemporaryDatabase(raw));
    writeFileSync(`${raw}.db`, '');
    expect(parseDatabaseReference(raw)).toEqual({ location: `${raw}.db` });
  });

  it('leaves directories, JSON files, URLs and unknown names to other providers', () => {
    const raw = temporaryDatabase();
    cleanups.push(() => removeTemporaryDatabase(raw));
    const directory = join(raw, '..', 'json-checkpoints');
    mkdirSync(directory);
    writeFileSync(join(directory, 'cp.json'), '{}');
    expect(parseDatabaseReference(directory)).toBeUndefined();
    expect(parseDatabaseReference(join(directory, 'cp.json'))).toBeUndefined();
    expect(parseDatabaseReference('postgres://localhost/db#abc')).toBeUndefined();
    expect(parseDatabaseReference(join(raw, '..', 'nothing-here'))).toBeUndefined();
  });
});
