import { copyFileSync, existsSync, statSync } from 'node:fs';
import { growingRun, writeGrowingCheckpointsSync } from '@crewline/provider-testkit/fixtures';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteProvider } from './sqlite-provider.js';
import { runScript } from './test-support/child-processes.js';
import { removeTemporaryDatabase, temporaryDatabase } from './test-support/temporary-database.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/**
 * A database whose writer was killed (`kill -9`) while writing: its last commits are only in the
 * `-wal` file beside it, as after a Ctrl+C of a script. Returns its location.
 */
async function databaseOfKilledWriter(): Promise<string> {
  const raw = temporaryDatabase();
  cleanups.push(() => removeTemporaryDatabase(raw));
  const location = new SqliteProvider().resolveLocation(raw);
  let output = '';
  const child = runScript('./crash-writer.ts', [location, 'killed'], (text) => {
    output += text;
  });
  const started = performance.now();
  while (!output.includes('ready')) {
    if (performance.now() - started > 15_000) throw new Error('crash writer never became ready');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  child.kill('SIGKILL');
  const result = await child.done;
  expect(result.signal, result.stderr).toBe('SIGKILL');
  expect(existsSync(`${location}-wal`)).toBe(true);
  return location;
}

/** The checkpoints a copy of the `.db` file alone lists: what a backup of that file holds. */
async function listedByCopyOfFileAlone(location: string): Promise<string[]> {
  const copy = `${location}.copy.db`;
  copyFileSync(location, copy);
  const reader = new SqliteProvider();
  try {
    return (await reader.list(copy)).map((entry) => entry.id).sort();
  } finally {
    reader.close();
  }
}

describe('a -wal file left by a killed process', () => {
  it('is copied back into the .db and removed by the next process that reads, writes and closes', async () => {
    const location = await databaseOfKilledWriter();
    // As `crewline checkpoint resume` does: it reads the checkpoint first, then writes the run on.
    const resumer = new SqliteProvider();
    const before = await resumer.list(location);
    expect(before.length).toBeGreaterThan(0);
    const written = writeGrowingCheckpointsSync(growingRun({ provider: resumer, location, tasks: 4 }), 3);
    const everyId = [...before.map((entry) => entry.id), ...written].sort();
    expect((await resumer.list(location)).map((entry) => entry.id).sort()).toEqual(everyId);
    resumer.close();
    expect(existsSync(`${location}-wal`)).toBe(false);
    expect(existsSync(`${location}-shm`)).toBe(false);
    expect(await listedByCopyOfFileAlone(location)).toEqual(everyId);
  }, 30_000);

  it('is copied back and removed by a process that only writes, then closes', async () => {
    const location = await databaseOfKilledWriter();
    const writer = new SqliteProvider();
    writeGrowingCheckpointsSync(growingRun({ provider: writer, location, tasks: 4 }), 2);
    const everyId = (await writer.list(location)).map((entry) => entry.id).sort();
    writer.close();
    expect(existsSync(`${location}-wal`)).toBe(false);
    expect(await listedByCopyOfFileAlone(location)).toEqual(everyId);
  }, 30_000);

  it('is left as it was by a process that only reads: reads never write to the database', async () => {
    const location = await databaseOfKilledWriter();
    const databaseBytes = statSync(location).size;
    const walBytes = statSync(`${location}-wal`).size;
    const reader = new SqliteProvider();
    expect((await reader.list(location)).length).toBeGreaterThan(0);
    reader.close();
    expect(statSync(location).size).toBe(databaseBytes);
    expect(statSync(`${location}-wal`).size).toBe(walBytes);
  }, 30_000);

  it('stays beside a database another process still writes, and the last writer to close copies it back', async () => {
    const location = await databaseOfKilledWriter();
    const first = new SqliteProvider();
    const second = new SqliteProvider();
    await first.list(location);
    writeGrowingCheckpointsSync(growingRun({ provider: first, location, tasks: 4 }), 2);
    await second.list(location);
    writeGrowingCheckpointsSync(growingRun({ provider: second, location, tasks: 4 }), 2);
    first.close();
    // The second provider's connection still uses the WAL: it must not have been removed.
    expect(existsSync(`${location}-wal`)).toBe(true);
    writeGrowingCheckpointsSync(growingRun({ provider: second, location, tasks: 4 }), 1);
    const everyId = (await second.list(location)).map((entry) => entry.id).sort();
    second.close();
    expect(existsSync(`${location}-wal`)).toBe(false);
    expect(await listedByCopyOfFileAlone(location)).toEqual(everyId);
  }, 30_000);

  it('is copied back into the .db when another provider of the process still reads it as the writer closes', async () => {
    const location = await databaseOfKilledWriter();
    // Two providers of one process (a CLI that lists with one and resumes with another): the
    // read-only one closes last, and a read-only connection can neither copy the WAL back nor remove it.
    const reader = new SqliteProvider();
    const writer = new SqliteProvider();
    await reader.list(location);
    writeGrowingCheckpointsSync(growingRun({ provider: writer, location, tasks: 4 }), 2);
    const everyId = (await writer.list(location)).map((entry) => entry.id).sort();
    writer.close();
    reader.close();
    expect(await listedByCopyOfFileAlone(location)).toEqual(everyId);
  }, 30_000);
});
