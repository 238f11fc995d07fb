import { readDocument } from '@crewline/runtime-state';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteProvider } from './sqlite-provider.js';
import { runScript } from './test-support/child-processes.js';
import { removeTemporaryDatabase, temporaryDatabase } from './test-support/temporary-database.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function writeFromProcesses(
  location: string,
  writers: number,
  perWriter: number,
  busyTimeoutMs?: number,
) {
  const runs = Array.from(
    { length: writers },
    (_, index) =>
      runScript('./writer-process.ts', [
        location,
        String(index),
        String(perWriter),
        ...(busyTimeoutMs === undefined ? [] : [String(busyTimeoutMs)]),
      ]).done,
  );
  return Promise.all(runs);
}

describe('several processes writing one database', () => {
  it('4 processes × 200 checkpoints: all 800 stored, none failed, every one reads back', async () => {
    const provider = new SqliteProvider();
    const raw = temporaryDatabase();
    const location = provider.resolveLocation(raw);
    cleanups.push(() => {
      provider.close();
      removeTemporaryDatabase(raw);
    });
    const results = await writeFromProcesses(location, 4, 200);
    for (const result of results) {
      expect(result.stderr).not.toMatch(/SQLITE_BUSY|database is locked/);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ written: 200 });
    }
    const listed = await provider.list(location);
    expect(listed).toHaveLength(800);
    expect(new Set(listed.map((entry) => entry.lineageId)).size).toBe(4);
    for (const entry of listed)
      expect((await readDocument(provider, location, entry.id)).metadata.id).toBe(entry.id);
    const db = new Database(location, { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  }, 60_000);

  it('with a 1 ms busy_timeout the provider retries on its own: still nothing lost, no SQLITE_BUSY', async () => {
    const provider = new SqliteProvider();
    const raw = temporaryDatabase();
    const location = provider.resolveLocation(raw);
    cleanups.push(() => {
      provider.close();
      removeTemporaryDatabase(raw);
    });
    const results = await writeFromProcesses(location, 4, 100, 1);
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(await provider.list(location)).toHaveLength(400);
  }, 60_000);
});
