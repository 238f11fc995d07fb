import { closeSync, existsSync, mkdirSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { CrewlineError, type CrewlineErrorCode } from '@crewline/events';
import { growingRun } from '@crewline/provider-testkit/fixtures';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteProvider } from '../sqlite-provider.js';
import { RecordingProvider } from '../test-support/recording-provider.js';
import { removeTemporaryDatabase, temporaryDatabase } from '../test-support/temporary-database.js';
import { Connection } from './connection.js';
import { SCHEMA_VERSION } from './schema.js';
import { WalCheckpointer } from './wal-checkpointer.js';
import { walBoundPages } from './wal-upkeep.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  vi.restoreAllMocks();
});

function setup() {
  const provider = new SqliteProvider();
  const raw = temporaryDatabase();
  cleanups.push(() => {
    provider.close();
    removeTemporaryDatabase(raw);
  });
  return { provider, raw, location: provider.resolveLocation(raw) };
}

async function expectCode(action: () => Promise<unknown>, code: CrewlineErrorCode, message: RegExp) {
  try {
    await action();
  } catch (error) {
    expect(CrewlineError.hasCode(error, code), String(error)).toBe(true);
    expect((error as Error).message).toMatch(message);
    return;
  }
  expect.fail('the call succeeded');
}

describe('opening a database', () => {
  it('refuses a file that is not a SQLite database, and leaves it untouched', async () => {
    const { provider, location } = setup();
    writeFileSync(location, '{"format": "crewline.checkpoint", "not": "a database"}\n');
    const before = statSync(location).size;
    await expectCode(() => provider.list(location), 'invalid_config', /is not a SQLite database/);
    const run = growingRun({ provider, location, tasks: 1 });
    run.step();
    await expectCode(() => run.state.writeCheckpoint(), 'invalid_config', /is not a SQLite database/);
    expect(statSync(location).size).toBe(before);
  });

  it("refuses another application's SQLite database", async () => {
    const { provider, location } = setup();
    const other = new Database(location);
    other.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)');
    other.close();
    await expectCode(() => provider.list(location), 'invalid_config', /another application/);
  });

  it('refuses a database written by a newer schema', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 1 });
    run.state.writeCheckpointSync({ trigger: run.step() });
    provider.close();
    const db = new Database(location);
    db.pragma('user_version = 99');
    db.close();
    await expectCode(() => provider.list(location), 'unsupported_version', /schema version 99/);
  });

  it('reads a database of schema version 1 as it is, and upgrades it on the first write', async () => {
    const raw = temporaryDatabase();
    const recorder = new RecordingProvider();
    const location = recorder.resolveLocation(raw);
    cleanups.push(() => {
      recorder.close();
      removeTemporaryDatabase(raw);
    });
    const run = growingRun({ provider: recorder, location, tasks: 2 });
    for (let index = 0; index < 3; index += 1) run.state.writeCheckpointSync({ trigger: run.step() });
    recorder.close();
    // Version 1 had two listing indexes, which version 2 dropped.
    const old = new Database(location);
    old.exec(
      'CREATE INDEX checkpoints_by_branch ON checkpoints (branch, id); CREATE INDEX checkpoints_by_lineage ON checkpoints (lineage_id, id);',
    );
    old.pragma('user_version = 1');
    old.close();
    const layout = () => {
      const db = new Database(location, { readonly: true });
      try {
        const names = db
          .prepare(
            "SELECT name FROM sqlite_schema WHERE type = 'index' AND name LIKE 'checkpoints_by_%' ORDER BY name",
          )
          .pluck()
          .all();
        return { version: db.pragma('user_version', { simple: true }), names };
      } finally {
        db.close();
      }
    };

    const reader = new SqliteProvider();
    cleanups.push(() => reader.close());
    const listed = await reader.list(location, { branch: 'main' });
    expect(listed.map((checkpoint) => checkpoint.id)).toEqual([...recorder.written.keys()]);
    expect(layout()).toEqual({ version: 1, names: ['checkpoints_by_branch', 'checkpoints_by_lineage'] });

    run.state.writeCheckpointSync({ trigger: run.step() });
    expect(layout()).toEqual({ version: SCHEMA_VERSION, names: [] });
    expect(await recorder.mismatches(location)).toEqual([]);
    expect(await recorder.list(location)).toHaveLength(4);
  });

  it('refuses a directory', async () => {
    const { provider, location } = setup();
    mkdirSync(location);
    await expectCode(() => provider.list(location), 'invalid_config', /is a directory/);
  });

  it('does not create a database to read from a location that does not exist', async () => {
    const { provider, location } = setup();
    expect(await provider.list(location)).toEqual([]);
    expect(await provider.latest(location)).toBeUndefined();
    expect(await provider.delete(location, '20260101T000000000-00000000')).toBe(false);
    await expectCode(
      () => provider.read(location, '20260101T000000000-00000000'),
      'not_found',
      /does not exist/,
    );
    expect(() => statSync(location)).toThrow();
  });

  it('reads an empty (0-byte) database read-only: no schema is created, the file stays empty', async () => {
    const { provider, location } = setup();
    writeFileSync(location, '');
    expect(provider.parseReference(location)).toEqual({ location });
    expect(await provider.list(location)).toEqual([]);
    expect(await provider.latest(location, { branch: 'main' })).toBeUndefined();
    await expectCode(
      () => provider.read(location, '20260101T000000000-00000000'),
      'not_found',
      /holds no checkpoints/,
    );
    expect((await provider.prune(location, { keep: 1 })).removed).toEqual([]);
    expect(await provider.delete(location, '20260101T000000000-00000000')).toBe(false);
    expect(await provider.stats(location)).toBeUndefined();
    expect(statSync(location).size).toBe(0);
    // A write is what creates the schema, and reads then see it through the same provider.
    const run = growingRun({ provider, location, tasks: 1 });
    const written = run.state.writeCheckpointSync({ trigger: run.step() });
    expect((await provider.list(location)).map((entry) => entry.id)).toEqual([written.id]);
  });

  it('a reader of a database another provider writes opens it read-only and sees every later write', async () => {
    const { provider: writer, location } = setup();
    const run = growingRun({ provider: writer, location, tasks: 2 });
    const first = run.state.writeCheckpointSync({ trigger: run.step() });
    const reader = new SqliteProvider({ synchronous: 'full' });
    cleanups.push(() => reader.close());
    expect((await reader.list(location)).map((entry) => entry.id)).toEqual([first.id]);
    expect((await reader.stats(location))?.synchronous).toBe('full');
    const second = run.state.writeCheckpointSync({ trigger: run.step() });
    expect((await reader.latest(location))?.id).toBe(second.id);
    // The same provider then writes: its read-only connection is replaced by a writable one.
    const other = growingRun({ provider: reader, location, tasks: 1 });
    other.state.lineage.branch = 'reader';
    const third = await other.state.writeCheckpoint({ trigger: other.step() });
    expect((await writer.list(location)).map((entry) => entry.id)).toEqual([first.id, second.id, third.id]);
  });

  it('creates the database readable by its owner only', () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 1 });
    run.state.writeCheckpointSync({ trigger: run.step() });
    expect(statSync(location).mode & 0o777).toBe(0o600);
    expect(statSync(`${location}-wal`).mode & 0o777).toBe(0o600);
  });

  it('creates the schema once when several providers open a new database together', async () => {
    const { location } = setup();
    const providers = Array.from({ length: 4 }, () => new SqliteProvider());
    cleanups.push(() => {
      for (const provider of providers) provider.close();
    });
    await Promise.all(
      providers.map(async (provider, index) => {
        const run = growingRun({ provider, location, tasks: 1, crew: undefined });
        run.state.lineage.branch = `writer-${index}`;
        await run.state.writeCheckpoint({ trigger: run.step() });
      }),
    );
    expect(await providers[0]!.list(location)).toHaveLength(4);
  });
});

describe('the WAL beside an open database', () => {
  it('follows the database: an eighth of its pages, between 256 KiB and 4 MiB of 4 KiB pages', () => {
    expect(walBoundPages(10)).toBe(64);
    expect(walBoundPages(1000)).toBe(125);
    expect(walBoundPages(100_000)).toBe(1024);
  });

  it('stays within its bound in a run that never lets the event loop idle', () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 60, outputBytes: 2000 });
    let largest = 0;
    // Synchronous writes one after another: no idle-time checkpoint runs, only SQLite's own.
    for (let index = 0; index < 180; index += 1) {
      run.state.writeCheckpointSync({ trigger: run.step() });
      largest = Math.max(largest, statSync(`${location}-wal`).size);
    }
    const databaseBytes = statSync(location).size;
    expect(databaseBytes).toBeLessThan(2_000_000);
    // The bound (64 pages here) plus the frames of the write that crossed it.
    expect(largest).toBeLessThan(64 * 4096 + 64 * 1024);
  });

  it('keeps its file from one cycle to the next: a run that never idles neither cuts the file back nor grows it again each cycle', () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 60, outputBytes: 2000 });
    let cut = 0;
    let grown = 0;
    let restarts = 0;
    let size = 0;
    let largest = 0;
    let frames = 0;
    // Synchronous writes one after another: no idle-time checkpoint runs, only SQLite's own.
    for (let index = 0; index < 240; index += 1) {
      run.state.writeCheckpointSync({ trigger: run.step() });
      const next = statSync(`${location}-wal`).size;
      // The WAL's length in frames, from the wal-index header (mxFrame, byte 16 of the -shm file).
      const header = Buffer.alloc(20);
      const descriptor = openSync(`${location}-shm`, 'r');
      readSync(descriptor, header, 0, 20, 0);
      closeSync(descriptor);
      const nextFrames = header.readUInt32LE(16);
      if (index > 0 && nextFrames < frames) restarts += 1;
      if (index > 0 && next < size) cut += 1;
      // Past the largest the file has been: new blocks for the file system to allocate.
      if (index > 0 && next > largest) grown += 1;
      size = next;
      largest = Math.max(largest, next);
      frames = nextFrames;
    }
    expect(restarts).toBeGreaterThan(5);
    expect(cut).toBe(0);
    // The bound follows the database as it grows, and the file with it: a few growths, not one per cycle.
    expect(grown).toBeLessThan(restarts);
  });

  /** The WAL's length in frames and how much of it is copied back, from the wal-index header. */
  function walIndex(location: string) {
    const header = Buffer.alloc(100);
    const descriptor = openSync(`${location}-shm`, 'r');
    readSync(descriptor, header, 0, 100, 0);
    closeSync(descriptor);
    return { frames: header.readUInt32LE(16), copied: header.readUInt32LE(96) };
  }

  /** Waits (idle turns of the event loop) until `done` holds, for at most 10 s. */
  async function idleUntil(done: () => boolean) {
    for (let waited = 0; waited < 10_000 && !done(); waited += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  it('is copied back by a thread while the event loop is idle, not by the run, and restarted by its own connection', async () => {
    const start = vi.spyOn(WalCheckpointer, 'start');
    const noteWrite = vi.spyOn(Connection.prototype, 'noteWrite');
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 20, outputBytes: 2000 });
    // Enough writes for an idle-time checkpoint to be scheduled, then idle turns of the event loop.
    for (let index = 0; index < 12; index += 1) run.state.writeCheckpointSync({ trigger: run.step() });
    expect(walIndex(location).frames).toBeGreaterThan(16);
    const connection = noteWrite.mock.contexts[0] as Connection;
    // Every checkpoint of the WAL this thread runs from here on: none (the thread has its own
    // better-sqlite3, loaded in it).
    const pragma = vi.spyOn(Database.prototype, 'pragma');
    await idleUntil(() => walIndex(location).frames === 1);
    const checkpointer = start.mock.results[0]!.value as WalCheckpointer;
    expect(checkpointer.passes).toBeGreaterThan(0);
    expect(pragma.mock.calls.filter(([source]) => /wal_checkpoint/.test(source))).toEqual([]);
    // Copied back and restarted: one frame (the restart's own commit), where it used to stay whole
    // (copied back) until the run's next write restarted it and synced the new WAL header.
    expect(walIndex(location).frames).toBe(1);
    // By this connection: no other connection committed, so the next write still continues the last
    // one from memory (a restart committed by the thread's connection dropped that, and with it the
    // value chunks the run reuses: a 500-task flow stored 13% more).
    expect(connection.statements.dataVersion.get()).toBe(connection.lastWrite?.dataVersion);
    run.state.writeCheckpointSync({ trigger: run.step() });
    // The next write appends after it.
    expect(walIndex(location).frames).toBeGreaterThan(1);
    expect(await provider.list(location)).toHaveLength(13);
  });

  it('stays within its bound while the thread copies it back at idle turns', async () => {
    const start = vi.spyOn(WalCheckpointer, 'start');
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 60, outputBytes: 2000 });
    let largest = 0;
    let restarts = 0;
    let frames = 0;
    // A run that idles (its model's wait) every few writes, as a crew with a model does.
    for (let index = 0; index < 200; index += 1) {
      run.state.writeCheckpointSync({ trigger: run.step() });
      largest = Math.max(largest, statSync(`${location}-wal`).size);
      if (index % 3 === 2) await new Promise((resolve) => setTimeout(resolve, 1));
      const next = walIndex(location).frames;
      if (next < frames) restarts += 1;
      frames = next;
    }
    const checkpointer = start.mock.results[0]!.value as WalCheckpointer;
    expect(checkpointer.passes).toBeGreaterThan(3);
    expect(restarts).toBeGreaterThan(3);
    // The bound (64 pages here) plus the frames of the write that crossed it.
    expect(largest).toBeLessThan(64 * 4096 + 64 * 1024);
    expect(start).toHaveBeenCalledOnce();
  });

  it('leaves the restart to the next write when another connection holds the write lock, without waiting', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 20, outputBytes: 2000 });
    for (let index = 0; index < 12; index += 1) run.state.writeCheckpointSync({ trigger: run.step() });
    // Another writer (another process, as SQLite sees it) holds the lock while the thread copies back.
    const other = new Database(location);
    other.exec('BEGIN IMMEDIATE');
    await idleUntil(() => walIndex(location).copied === walIndex(location).frames);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(walIndex(location).frames).toBeGreaterThan(16);
    other.exec('ROLLBACK');
    other.close();
    // The next write restarts the WAL itself.
    run.state.writeCheckpointSync({ trigger: run.step() });
    expect(walIndex(location).frames).toBeLessThan(16);
    expect(await provider.list(location)).toHaveLength(13);
  });

  it('is copied back by a thread once a run that never idles fills it; the thread closes with the provider', async () => {
    const start = vi.spyOn(WalCheckpointer, 'start');
    const { provider, location } = setup();
    // Large answers: the thread starts only for a WAL bound of 1 MiB or more (a 5 MiB database).
    const run = growingRun({ provider, location, tasks: 400, outputBytes: 30_000 });
    let writes = 0;
    let largestOverBound = 0;
    const write = () => {
      run.state.writeCheckpointSync({ trigger: run.step() });
      writes += 1;
      const bound = walBoundPages(statSync(location).size / 4096) * 4096;
      largestOverBound = Math.max(largestOverBound, statSync(`${location}-wal`).size / bound);
    };
    // Synchronous writes until the WAL reaches its bound: idle-time checkpoints never run.
    while (start.mock.calls.length === 0 && writes < 1000) write();
    expect(start).toHaveBeenCalledOnce();
    expect(walBoundPages(statSync(location).size / 4096)).toBeGreaterThanOrEqual(256);
    const checkpointer = start.mock.results[0]!.value as WalCheckpointer;
    expect(checkpointer.running).toBe(true);
    // The run goes on writing, with turns of the event loop but no idle-time checkpoint any more:
    // the thread copies the WAL back, and the WAL keeps near its bound.
    for (let round = 0; round < 60 && (round < 10 || checkpointer.passes === 0); round += 1) {
      for (let index = 0; index < 5; index += 1) write();
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(checkpointer.passes).toBeGreaterThan(0);
    expect(start).toHaveBeenCalledOnce();
    expect(largestOverBound).toBeLessThan(1.5);

    provider.close();
    expect(checkpointer.running).toBe(false);
    // Its connection closed before the writer's: the writer's close was the last and removed the WAL.
    expect(existsSync(`${location}-wal`)).toBe(false);
    expect(await provider.list(location)).toHaveLength(writes);
  });

  it('keeps its checkpoints in the writer when no thread can start', () => {
    vi.spyOn(WalCheckpointer, 'start').mockReturnValue(undefined);
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 400, outputBytes: 30_000 });
    let largestOverBound = 0;
    for (let index = 0; index < 600; index += 1) {
      run.state.writeCheckpointSync({ trigger: run.step() });
      const bound = walBoundPages(statSync(location).size / 4096) * 4096;
      largestOverBound = Math.max(largestOverBound, statSync(`${location}-wal`).size / bound);
    }
    expect(WalCheckpointer.start).toHaveBeenCalledOnce();
    // The bound plus the frames of the write that crossed it.
    expect(largestOverBound).toBeLessThan(1.3);
  });
});
