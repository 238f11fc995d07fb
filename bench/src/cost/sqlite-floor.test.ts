import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteProvider } from '@crewline/provider-sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { proseSource } from '../scenario/real-prose.js';
import { createRealisticRun } from '../scenario/realistic-run.js';
import { replayStoredRows } from './sqlite-floor.js';

const directory = mkdtempSync(join(tmpdir(), 'crewline-floor-test-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function rowsOf(location: string, table: string, key: string): unknown[] {
  const db = new Database(location, { readonly: true });
  try {
    return db.prepare(`SELECT * FROM ${table} ORDER BY ${key}`).all();
  } finally {
    db.close();
  }
}

describe('the SQLite floor (rows replayed per checkpoint)', () => {
  it('replays exactly the rows each checkpoint stored, one timed transaction per checkpoint', async () => {
    const location = join(directory, 'run.db');
    const provider = new SqliteProvider();
    const run = createRealisticRun({ shape: 'flow', tasks: 10, source: proseSource() });
    await run.kickoff({ location, provider, onEvents: ['*'] });
    const checkpoints = (await provider.list(location)).length;
    await provider.close();

    const replayed = join(directory, 'floor.db');
    const times = replayStoredRows(location, replayed);
    expect(times).toHaveLength(checkpoints);
    for (const time of times) expect(time).toBeGreaterThan(0);
    // Every row of the run, no more: the replay stores what the provider stored.
    for (const [table, key] of [
      ['checkpoints', 'id'],
      ['chunks', 'id'],
      ['events', 'key'],
      ['streams', 'id'],
    ] as const) {
      const original = rowsOf(location, table, key);
      expect(original.length).toBeGreaterThan(0);
      expect(rowsOf(replayed, table, key)).toEqual(original);
    }
  });
});
