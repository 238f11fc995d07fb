import { readFileSync } from 'node:fs';
import { CrewlineError } from '@crewline/events';
import { growingRun } from '@crewline/provider-testkit/fixtures';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteCode } from '../errors.js';
import { SqliteProvider } from '../sqlite-provider.js';
import { runScript } from '../test-support/child-processes.js';
import { removeTemporaryDatabase, temporaryDatabase } from '../test-support/temporary-database.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function setup(options: ConstructorParameters<typeof SqliteProvider>[0]) {
  const provider = new SqliteProvider(options);
  const raw = temporaryDatabase();
  const location = provider.resolveLocation(raw);
  cleanups.push(() => {
    provider.close();
    removeTemporaryDatabase(raw);
  });
  const run = growingRun({ provider, location, tasks: 2 });
  run.state.writeCheckpointSync({ trigger: run.step() });
  return { provider, location, run };
}

describe('a database locked by another process', () => {
  it('a write waits past busy_timeout, retrying with backoff, and succeeds once the lock is released', async () => {
    const { provider, location, run } = setup({ busyTimeoutMs: 20, busyRetryMs: 10_000 });
    let output = '';
    const holder = runScript('./busy-holder.ts', [location, '600'], (text) => {
      output += text;
    });
    while (!output.includes('locked')) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = performance.now();
    const stored = await run.state.writeCheckpoint({ trigger: run.step() });
    expect(performance.now() - started).toBeGreaterThan(100);
    expect((await holder.done).code).toBe(0);
    expect((await provider.latest(location))?.id).toBe(stored.id);
    // Readers are never blocked by a writer in WAL mode.
    expect((await provider.list(location)).length).toBe(2);
  });

  it('gives up after busyRetryMs with a typed write_failed error, never a raw SQLITE_BUSY', () => {
    const { provider, location, run } = setup({ busyTimeoutMs: 10, busyRetryMs: 120 });
    const holder = new Database(location);
    holder.exec('BEGIN IMMEDIATE');
    try {
      run.step();
      let caught: unknown;
      try {
        run.state.writeCheckpointSync();
      } catch (error) {
        caught = error;
      }
      expect(CrewlineError.hasCode(caught, 'write_failed')).toBe(true);
      expect((caught as Error).message).toMatch(/stayed locked by another connection/);
      expect(sqliteCode((caught as Error).cause)).toMatch(/^SQLITE_BUSY/);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(run.state.writeCheckpointSync().id).toBeTruthy();
    expect(readFileSync(location).subarray(0, 16).toString('latin1')).toBe('SQLite format 3\u0000');
    void provider;
  });
});
