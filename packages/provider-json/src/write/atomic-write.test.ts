import * as fs from 'node:fs';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JsonProvider } from '../json-provider.js';

// Fault injection: the file system calls the provider makes are wrapped so a test can make one fail.
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return {
    ...actual,
    fsync: vi.fn(actual.fsync),
    writev: vi.fn(actual.writev),
    fsyncSync: vi.fn(actual.fsyncSync),
    openSync: vi.fn(actual.openSync),
    renameSync: vi.fn(actual.renameSync),
  };
});

const actualFs = await vi.importActual<typeof import('node:fs')>('node:fs');

function ioError(message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${message}: i/o error`), { code: 'EIO' });
}

/** Every file under a directory, hidden ones included. */
function allFiles(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter((path) =>
    fs.statSync(join(directory, path)).isFile(),
  );
}

describe('atomic writes under injected failures', () => {
  let location: string;
  beforeEach(() => {
    location = mkdtempSync(join(tmpdir(), 'crewline-json-faults-'));
  });
  afterEach(() => {
    vi.mocked(fs.fsync).mockImplementation(actualFs.fsync);
    vi.mocked(fs.fsyncSync).mockImplementation(actualFs.fsyncSync);
    vi.mocked(fs.renameSync).mockImplementation(actualFs.renameSync);
    rmSync(location, { recursive: true, force: true });
  });

  it('syncs the file and its directory on every write (and nothing with fsync: false)', () => {
    const synced = vi.mocked(fs.fsyncSync);
    synced.mockClear();
    new JsonProvider().writeSync(location, buildCheckpointWrite({ metadata: { branch: 'a/b' } }));
    // The file, its directory, and the parents of the two new directories ("a" in the location, "b" in "a").
    expect(synced.mock.calls.length).toBe(4);
    synced.mockClear();
    new JsonProvider({ fsync: false }).writeSync(location, buildCheckpointWrite());
    expect(synced).not.toHaveBeenCalled();
  });

  it('a failed file fsync fails the sync write and leaves no temp file and no checkpoint', async () => {
    vi.mocked(fs.fsyncSync).mockImplementationOnce(() => {
      throw ioError('fsync');
    });
    const provider = new JsonProvider();
    expect(() => provider.writeSync(location, buildCheckpointWrite())).toThrow(
      expect.objectContaining({ code: 'write_failed', message: expect.stringContaining('fsync: i/o error') }),
    );
    expect(allFiles(location)).toEqual([]);
    expect(await provider.list(location)).toEqual([]);
  });

  it('a failed directory fsync after the rename fails the write and keeps the whole renamed file, sync as async', async () => {
    const real = actualFs.fsyncSync;
    let calls = 0;
    vi.mocked(fs.fsyncSync).mockImplementation((descriptor) => {
      calls += 1;
      if (calls === 2) throw ioError('directory fsync');
      real(descriptor);
    });
    const provider = new JsonProvider();
    const syncWrite = buildCheckpointWrite();
    expect(() => provider.writeSync(location, syncWrite)).toThrow(
      expect.objectContaining({ code: 'write_failed', message: expect.stringContaining('directory fsync') }),
    );
    // The async path: its temp file is written with O_SYNC, so its only fsync is the directory's.
    vi.mocked(fs.fsync).mockImplementation(((_descriptor: number, callback: (error: Error) => void) =>
      callback(ioError('directory fsync'))) as typeof fs.fsync);
    const asyncWrite = buildCheckpointWrite();
    await expect(provider.write(location, asyncWrite)).rejects.toMatchObject({ code: 'write_failed' });
    vi.mocked(fs.fsync).mockImplementation(actualFs.fsync);
    await provider.close();
    // Both files were written and flushed before their rename: whole checkpoints, kept by both paths.
    const stored = await provider.list(location);
    expect(stored.map((entry) => entry.id).sort()).toEqual(
      [syncWrite.metadata.id, asyncWrite.metadata.id].sort(),
    );
    for (const write of [syncWrite, asyncWrite])
      expect(((await provider.read(location, write.metadata.id)) as { text: string }).text).toBe(
        Buffer.from(write.bytes()).toString('utf8'),
      );
    expect(allFiles(location).filter((path) => path.endsWith('.tmp'))).toEqual([]);
  });

  it('a failed file sync fails the async write and leaves nothing behind', async () => {
    // Async writes open their temp file with O_SYNC (not on Windows): the write itself syncs and
    // reports the sync's error; where a separate fsync follows, it is the first fsync of the write.
    if (process.platform === 'win32')
      vi.mocked(fs.fsync).mockImplementationOnce(((_descriptor: number, callback: (error: Error) => void) =>
        callback(ioError('fsync'))) as typeof fs.fsync);
    else
      vi.mocked(fs.writev).mockImplementationOnce(((
        _descriptor: number,
        _buffers: unknown,
        callback: (error: Error) => void,
      ) => callback(ioError('write'))) as unknown as typeof fs.writev);
    const provider = new JsonProvider();
    await expect(provider.write(location, buildCheckpointWrite())).rejects.toMatchObject({
      code: 'write_failed',
    });
    expect(allFiles(location)).toEqual([]);
  });

  it('a failed rename fails the write and removes the temp file (sync and async)', async () => {
    // Both writes rename directly (a rename does not wait for the disk).
    const crossDevice = () => {
      throw Object.assign(new Error('cross-device link'), { code: 'EXDEV' });
    };
    vi.mocked(fs.renameSync).mockImplementationOnce(crossDevice).mockImplementationOnce(crossDevice);
    const provider = new JsonProvider();
    expect(() => provider.writeSync(location, buildCheckpointWrite())).toThrow(
      expect.objectContaining({ code: 'write_failed' }),
    );
    await expect(provider.write(location, buildCheckpointWrite())).rejects.toMatchObject({
      code: 'write_failed',
    });
    expect(allFiles(location)).toEqual([]);
  });

  it('a failed write does not advance the run: the next checkpoint names the last stored one as parent', async () => {
    const { createTestRun } = await import('@crewline/provider-testkit/fixtures');
    const provider = new JsonProvider();
    const run = createTestRun({ provider, location });
    const first = run.state.writeCheckpointSync();
    vi.mocked(fs.fsyncSync).mockImplementationOnce(() => {
      throw ioError('fsync');
    });
    expect(() => run.state.writeCheckpointSync()).toThrow(expect.objectContaining({ code: 'write_failed' }));
    const next = run.state.writeCheckpointSync();
    expect(next.parentId).toBe(first.id);
    expect((await provider.list(location)).map((entry) => entry.id)).toEqual([first.id, next.id]);
  });
});

describe('durable removals', () => {
  let location: string;
  beforeEach(() => {
    location = mkdtempSync(join(tmpdir(), 'crewline-json-removals-'));
  });
  afterEach(() => {
    rmSync(location, { recursive: true, force: true });
  });

  /** Writes `count` checkpoints of one run on `main`, each the parent of the next. */
  function writeRun(provider: JsonProvider, count: number): void {
    let parentId: string | null = null;
    for (let index = 0; index < count; index += 1) {
      parentId = provider.writeSync(
        location,
        buildCheckpointWrite({ metadata: { lineageId: 'one-run', parentId } }),
      ).id;
    }
  }

  /** Directories opened for an fsync while `action` runs. */
  async function directoriesSynced(action: () => Promise<unknown>): Promise<string[]> {
    const opened = vi.mocked(fs.openSync);
    opened.mockClear();
    await action();
    return opened.mock.calls
      .map(([path, flags]) => ({ path: String(path), flags }))
      .filter(({ path, flags }) => flags === 'r' && !path.endsWith('.json'))
      .map(({ path }) => path);
  }

  it('syncs the directory a prune or delete removed files from, and the parent of a removed branch', async () => {
    const provider = new JsonProvider();
    writeRun(provider, 3);
    const other = provider.writeSync(location, buildCheckpointWrite({ metadata: { branch: 'what-if/a' } }));
    const main = join(location, 'main');

    expect(await directoriesSynced(() => provider.prune(location, { keep: 1, branch: 'main' }))).toEqual([
      main,
    ]);
    expect(allFiles(main)).toHaveLength(1);

    // Deleting the only checkpoint of a branch removes its directories up to the location.
    const synced = await directoriesSynced(() => provider.delete(location, other.id));
    expect(synced).toEqual([location]);
    expect(fs.existsSync(join(location, 'what-if'))).toBe(false);
  });

  it('syncs nothing with fsync: false', async () => {
    const provider = new JsonProvider({ fsync: false });
    writeRun(provider, 2);
    expect(await directoriesSynced(() => provider.prune(location, { keep: 1 }))).toEqual([]);
  });
});

describe('writeFilesAtomic', () => {
  it('puts a group of files in place in order, whole, and leaves no temp file', async () => {
    const { writeFilesAtomic } = await import('./atomic-write.js');
    const directory = mkdtempSync(join(tmpdir(), 'crewline-group-'));
    try {
      const files = ['a', 'b', 'c'].map((name) => ({
        directory,
        finalName: `${name}.json`,
        tempName: `.${name}.tmp`,
        bytes: Buffer.from(`{"name":"${name}"}`),
      }));
      await writeFilesAtomic(files, { fsync: true, mode: 0o600 });
      expect(readdirSync(directory).sort()).toEqual(['a.json', 'b.json', 'c.json']);
      expect(readFileSync(join(directory, 'b.json'), 'utf8')).toBe('{"name":"b"}');
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('a failed directory sync after a group was renamed fails the write but leaves the whole files in place', async () => {
    const { writeFilesAtomic } = await import('./atomic-write.js');
    const directory = mkdtempSync(join(tmpdir(), 'crewline-group-'));
    try {
      // Temp files are opened with O_SYNC: the only fsync of the group is the directory's.
      vi.mocked(fs.fsync).mockImplementation(((_descriptor: number, callback: (error: Error) => void) =>
        callback(ioError('directory fsync'))) as typeof fs.fsync);
      const files = ['a', 'b'].map((name) => ({
        directory,
        finalName: `${name}.json`,
        tempName: `.${name}.tmp`,
        bytes: Buffer.from(`{"name":"${name}"}`),
      }));
      await expect(writeFilesAtomic(files, { fsync: true, mode: 0o600 })).rejects.toMatchObject({
        code: 'write_failed',
      });
      // Their content is whole (and another writer may have placed the same names): not removed.
      expect(readdirSync(directory).sort()).toEqual(['a.json', 'b.json']);
      expect(readFileSync(join(directory, 'b.json'), 'utf8')).toBe('{"name":"b"}');
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('never renames a file after one that failed, and removes the temp files left', async () => {
    const { writeFilesAtomic } = await import('./atomic-write.js');
    const directory = mkdtempSync(join(tmpdir(), 'crewline-group-'));
    try {
      // The second temp name exists already: its exclusive open fails, so c must not appear.
      writeFileSync(join(directory, '.b.tmp'), 'someone else');
      const files = ['a', 'b', 'c'].map((name) => ({
        directory,
        finalName: `${name}.json`,
        tempName: `.${name}.tmp`,
        bytes: Buffer.from(name),
      }));
      await expect(writeFilesAtomic(files, { fsync: true, mode: 0o600 })).rejects.toMatchObject({
        code: 'write_failed',
      });
      expect(readdirSync(directory).sort()).toEqual(['.b.tmp', 'a.json']);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
