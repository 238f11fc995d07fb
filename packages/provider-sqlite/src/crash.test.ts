import { readDocument } from '@crewline/runtime-state';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteProvider } from './sqlite-provider.js';
import { runScript } from './test-support/child-processes.js';
import { removeTemporaryDatabase, temporaryDatabase } from './test-support/temporary-database.js';

const rounds = 10;
const writersPerRound = 3;

const outputs = new WeakMap<object, string>();

describe('kill -9 while writing', () => {
  const raw = temporaryDatabase();
  const provider = new SqliteProvider();
  const location = provider.resolveLocation(raw);
  afterAll(() => {
    provider.close();
    removeTemporaryDatabase(raw);
  });

  async function expectReadable(listed: { id: string; eventCount: number }[]) {
    for (const entry of listed) {
      const document = await readDocument(provider, location, entry.id);
      expect(document.metadata.id).toBe(entry.id);
      expect(document.events).toHaveLength(entry.eventCount);
    }
  }

  it(`${rounds * writersPerRound} writers killed at random moments: the database stays intact and every checkpoint reads`, async () => {
    let killed = 0;
    for (let round = 0; round < rounds; round += 1) {
      const writers = await Promise.all(
        Array.from({ length: writersPerRound }, async (_, index) => {
          const child = runScript('./crash-writer.ts', [location, `trial-${round}-${index}`], (text) => {
            outputs.set(child, (outputs.get(child) ?? '') + text);
          });
          const started = performance.now();
          while (!(outputs.get(child) ?? '').includes('ready')) {
            if (performance.now() - started > 15_000) throw new Error('crash writer never became ready');
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
          return child;
        }),
      );
      await Promise.all(
        writers.map(async (child) => {
          await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 250));
          child.kill('SIGKILL');
          const result = await child.done;
          expect(result.signal, result.stderr).toBe('SIGKILL');
          killed += 1;
        }),
      );
      const db = new Database(location, { readonly: true });
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      db.close();
      // The killed runs' own checkpoints; all the others are checked again once at the end.
      for (let index = 0; index < writersPerRound; index += 1) {
        const listed = await provider.list(location, { branch: `trial-${round}-${index}` });
        expect(listed.length).toBeGreaterThan(0);
        await expectReadable(listed);
      }
    }
    expect(killed).toBe(rounds * writersPerRound);
    // Other writers pruned and collected garbage meanwhile: every checkpoint must still read.
    await expectReadable(await provider.list(location));
    // Every killed run left its newest checkpoints behind, resumable.
    const branches = new Set((await provider.list(location)).map((entry) => entry.branch));
    expect(branches.size).toBe(rounds * writersPerRound);
  }, 120_000);
});
