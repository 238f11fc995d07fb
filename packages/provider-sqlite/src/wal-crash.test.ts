import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteProvider } from './sqlite-provider.js';
import { runScript } from './test-support/child-processes.js';
import { removeTemporaryDatabase, temporaryDatabase } from './test-support/temporary-database.js';

const rounds = 6;
const writersPerRound = 2;

describe('kill -9 while the checkpointer thread copies the WAL back', () => {
  const raw = temporaryDatabase();
  const provider = new SqliteProvider();
  const location = provider.resolveLocation(raw);
  afterAll(() => {
    provider.close();
    removeTemporaryDatabase(raw);
  });

  it(`${rounds * writersPerRound} writers of one database, idling between writes, killed at random moments: every checkpoint a write returned is stored`, async () => {
    const committed: string[] = [];
    let passes = 0;
    for (let round = 0; round < rounds; round += 1) {
      const writers = await Promise.all(
        Array.from({ length: writersPerRound }, async (_, index) => {
          let output = '';
          const child = runScript('./idle-writer.ts', [location, `idle-${round}-${index}`], (text) => {
            output += text;
          });
          const started = performance.now();
          while (!output.includes('ready')) {
            if (performance.now() - started > 15_000) throw new Error('idle writer never became ready');
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
          return child;
        }),
      );
      await Promise.all(
        writers.map(async (child) => {
          // Long enough for the thread to start (at the first idle turn) and run passes, and the WAL to restart.
          await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 400));
          child.kill('SIGKILL');
          const result = await child.done;
          expect(result.signal, result.stderr).toBe('SIGKILL');
          // Ids printed whole (a line cut by the kill is not one).
          const lines = result.stdout.split('\n').slice(0, -1);
          for (const line of lines) {
            if (line.startsWith('passes ')) passes = Math.max(passes, Number(line.slice('passes '.length)));
            else if (line !== 'ready') committed.push(line);
          }
        }),
      );
      const db = new Database(location, { readonly: true });
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      db.close();
    }
    // Enough writes for many WAL cycles, copied back by the writers' threads.
    expect(committed.length).toBeGreaterThan(rounds * writersPerRound * 20);
    expect(passes).toBeGreaterThan(0);
    const stored = new Set((await provider.list(location)).map((entry) => entry.id));
    expect(committed.filter((id) => !stored.has(id))).toEqual([]);
  }, 120_000);
});

describe('a process whose checkpointer thread runs', () => {
  it('ends on its own when its script ends without closing the provider', async () => {
    const raw = temporaryDatabase();
    const location = new SqliteProvider().resolveLocation(raw);
    try {
      const child = runScript('./idle-writer.ts', [location, 'ends', '60']);
      const timeout = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const result = await child.done;
      clearTimeout(timeout);
      expect(result.signal, 'still running 15 s later').toBeNull();
      expect(result.code, result.stderr).toBe(0);
      // The thread ran (and so was there to keep the process alive).
      expect(Number(/passes (\d+)\n$/.exec(result.stdout)?.[1])).toBeGreaterThan(0);
    } finally {
      removeTemporaryDatabase(raw);
    }
  }, 30_000);
});
