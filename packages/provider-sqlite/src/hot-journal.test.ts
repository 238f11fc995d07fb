import { existsSync } from 'node:fs';
import { growingRun } from '@crewline/provider-testkit/fixtures';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteProvider } from './sqlite-provider.js';
import { runScript } from './test-support/child-processes.js';
import { removeTemporaryDatabase, temporaryDatabase } from './test-support/temporary-database.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('a database left with a hot rollback journal (a writer killed mid-transaction)', () => {
  it('is read, resumed and written after the journal is rolled back, its checkpoints intact', async () => {
    const raw = temporaryDatabase();
    const writer = new SqliteProvider();
    const location = writer.resolveLocation(raw);
    const reader = new SqliteProvider();
    cleanups.push(() => {
      writer.close();
      reader.close();
      removeTemporaryDatabase(raw);
    });
    const run = growingRun({ provider: writer, location, tasks: 3 });
    const stored = [0, 1, 2].map(() => run.state.writeCheckpointSync({ trigger: run.step() }));
    writer.close();

    const killed = await runScript('./hot-journal-writer.ts', [location]).done;
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(existsSync(`${location}-journal`)).toBe(true);

    // SQLite refuses a read-only open of it (SQLITE_READONLY_ROLLBACK): listing it, or the claim a
    // resume makes first, used to fail with that error.
    const listed = await reader.list(location);
    expect(listed.map((checkpoint) => checkpoint.id)).toEqual(stored.map((checkpoint) => checkpoint.id));
    expect(existsSync(`${location}-journal`)).toBe(false);
    const latest = await reader.read(location, stored[2]!.id);
    expect('text' in latest && JSON.parse(latest.text).metadata.id).toBe(stored[2]!.id);
    // And the run goes on writing into it.
    const next = run.state.writeCheckpointSync({ trigger: run.step() });
    expect((await reader.list(location)).at(-1)?.id).toBe(next.id);
  });
});
