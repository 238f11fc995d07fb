import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { growingRun } from '@crewline/provider-testkit/fixtures';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteProvider } from '../sqlite-provider.js';
import { removeTemporaryDatabase, temporaryDatabase } from '../test-support/temporary-database.js';
import { WalCheckpointer } from './wal-checkpointer.js';

const descriptorFolder = '/proc/self/fd';

/** What every open descriptor of this process names (Linux: /proc/self/fd). */
function openFiles(): string[] {
  const files: string[] = [];
  for (const name of readdirSync(descriptorFolder)) {
    try {
      files.push(readlinkSync(`${descriptorFolder}/${name}`));
    } catch {
      // The listing's own descriptor, closed once it was read.
    }
  }
  return files;
}

/** Waits (idle turns) until `done` holds, for at most 10 s: terminated threads close their loops late. */
async function idleUntil(done: () => boolean) {
  for (let waited = 0; waited < 10_000 && !done(); waited += 10) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Writes `writes` checkpoints with an idle turn every two (a run waiting for its model): the thread starts. */
async function writeWithIdleTurns(provider: SqliteProvider, location: string, writes: number) {
  const run = growingRun({ provider, location, tasks: 20, outputBytes: 1000 });
  for (let index = 0; index < writes; index += 1) {
    run.state.writeCheckpointSync({ trigger: run.step() });
    if (index % 2 === 1) await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  vi.restoreAllMocks();
});

describe.skipIf(!existsSync(descriptorFolder))(
  "the -shm descriptor the checkpointer reads the WAL's header from",
  () => {
    it('is closed with the last connection: many databases written, closed and removed leave no descriptor open', async () => {
      const start = vi.spyOn(WalCheckpointer, 'start');
      const writeAndRemove = async () => {
        const provider = new SqliteProvider();
        const raw = temporaryDatabase();
        try {
          await writeWithIdleTurns(provider, provider.resolveLocation(raw), 40);
        } finally {
          provider.close();
          removeTemporaryDatabase(raw);
        }
      };
      // One first: what loading the driver and a first thread open once is not counted.
      await writeAndRemove();
      await idleUntil(() => false === openFiles().some((file) => file.includes('crewline-sqlite-')));
      const before = openFiles().length;
      const databases = 12;
      for (let index = 0; index < databases; index += 1) await writeAndRemove();
      // Every database started its thread (at its first idle turn).
      expect(start.mock.results.filter((result) => result.value !== undefined).length).toBe(databases + 1);
      await idleUntil(() => openFiles().length <= before);
      expect(openFiles().filter((file) => file.includes('-shm'))).toEqual([]);
      expect(openFiles().length).toBeLessThanOrEqual(before);
    });

    it('stays open while another connection of this process uses the database, and closes with the last one', async () => {
      const raw = temporaryDatabase();
      const writer = new SqliteProvider();
      const reader = new SqliteProvider();
      const location = writer.resolveLocation(raw);
      cleanups.push(() => {
        writer.close();
        reader.close();
        removeTemporaryDatabase(raw);
      });
      const start = vi.spyOn(WalCheckpointer, 'start');
      await writeWithIdleTurns(writer, location, 40);
      expect(start.mock.results[0]?.value).toBeInstanceOf(WalCheckpointer);
      // Another provider of this process reads the database: a connection of its own, the same -shm.
      expect((await reader.list(location)).length).toBe(40);
      const shmDescriptors = () => openFiles().filter((file) => file === `${location}-shm`).length;
      // SQLite's own and the checkpointer's.
      expect(shmDescriptors()).toBe(2);
      writer.close();
      // Closing the checkpointer's descriptor now would drop the reader's locks on the -shm file
      // (POSIX record locks belong to the process): it stays until the reader closes too.
      expect(shmDescriptors()).toBe(2);
      expect(existsSync(`${location}-shm`)).toBe(true);
      reader.close();
      // The files stay (the last connection was read-only), no descriptor of them does.
      expect(existsSync(`${location}-shm`)).toBe(true);
      expect(shmDescriptors()).toBe(0);
    });
  },
);
