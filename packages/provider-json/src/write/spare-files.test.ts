// The async write path at a run's barrier: spare temp files created ahead (no file is created while
// the run waits), O_SYNC writes (no separate fsync of the file), and the work an async write leaves
// behind (spares, id index entries) done one file system call at a time.
import * as fs from 'node:fs';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckpointWrite, createTestRun } from '@crewline/provider-testkit/fixtures';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JsonProvider } from '../json-provider.js';
import { indexedIds } from '../test-support/id-index-entries.js';

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return { ...actual, open: vi.fn(actual.open), fsync: vi.fn(actual.fsync) };
});

const actualFs = await vi.importActual<typeof import('node:fs')>('node:fs');

let location: string;
beforeEach(() => {
  location = mkdtempSync(join(tmpdir(), 'crewline-json-spares-'));
  vi.mocked(fs.open).mockClear();
  vi.mocked(fs.fsync).mockClear();
});
afterEach(() => {
  vi.mocked(fs.open).mockImplementation(actualFs.open);
  rmSync(location, { recursive: true, force: true });
});

const spareNames = (directory: string) => readdirSync(directory).filter((name) => name.startsWith('.spare.'));

/** Polls until `check` holds (the background lane works after the write resolves). */
async function eventually(check: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !check(); attempt += 1)
    await new Promise((resolve) => setTimeout(resolve, 5));
  expect(check()).toBe(true);
}

/** Paths the provider created through the async `fs.open` since the last clear. */
function createdPaths(): string[] {
  return vi.mocked(fs.open).mock.calls.map(([path]) => String(path));
}

/** Every spare's open reports back 40 ms late (a busy thread pool): its file exists before it is ready. */
function spareOpensLate(): void {
  vi.mocked(fs.open).mockImplementation(((...args: unknown[]) => {
    const callback = args.at(-1) as (error: unknown, descriptor?: number) => void;
    const late = String(args[0]).includes('/.spare.');
    return (actualFs.open as (...rest: unknown[]) => void)(
      ...args.slice(0, -1),
      (error: unknown, descriptor?: number) => {
        if (late) setTimeout(() => callback(error, descriptor), 40);
        else callback(error, descriptor);
      },
    );
  }) as typeof fs.open);
}

function batch(count: number) {
  const provider = new JsonProvider();
  const run = createTestRun({ provider, location });
  const writes = () => Array.from({ length: count }, () => buildCheckpointWrite({ run }));
  return { provider, writes };
}

describe('spare temp files', () => {
  it('a group written after another creates no file while the run waits: it fills spares made ahead', async () => {
    const { provider, writes } = batch(3);
    await provider.writeBatch(location, writes());
    const main = join(location, 'main');
    // Twice the group: two groups in a row (a tool call, then the next model call) find spares.
    await eventually(() => spareNames(main).length === 6);

    vi.mocked(fs.open).mockClear();
    const second = await provider.writeBatch(location, writes());
    const openedDuringWrite = createdPaths().filter((path) => path.startsWith(main));
    // Only the spares made again after the write (none for its checkpoint files).
    expect(openedDuringWrite.every((path) => path.includes('/.spare.'))).toBe(true);
    for (const stored of second) expect(fs.existsSync(stored.reference)).toBe(true);
    expect((await provider.list(location)).map((entry) => entry.id)).toHaveLength(6);

    await provider.close();
    expect(readdirSync(main).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('a single write uses a ready spare and leaves none of its own', async () => {
    const { provider, writes } = batch(1);
    const solo = new JsonProvider();
    await solo.write(location, writes()[0]!);
    expect(spareNames(join(location, 'main'))).toEqual([]);
    await provider.writeBatch(location, writes());
    await eventually(() => spareNames(join(location, 'main')).length === 2);
    await provider.write(location, writes()[0]!);
    expect(spareNames(join(location, 'main'))).toHaveLength(1);
    await provider.close();
    expect(spareNames(join(location, 'main'))).toEqual([]);
  });

  it('a group still lands when its branch directory was removed with its spares', async () => {
    const { provider, writes } = batch(2);
    await provider.writeBatch(location, writes());
    await eventually(() => spareNames(join(location, 'main')).length === 4);
    rmSync(join(location, 'main'), { recursive: true, force: true });
    const stored = await provider.writeBatch(location, writes());
    for (const checkpoint of stored) expect(fs.existsSync(checkpoint.reference)).toBe(true);
    await provider.close();
  });

  it('delete removes the spares of a branch directory it empties', async () => {
    const { provider, writes } = batch(1);
    const [only] = await provider.writeBatch(location, writes());
    await eventually(() => spareNames(join(location, 'main')).length === 2);
    await provider.delete(location, only!.id);
    expect(fs.existsSync(join(location, 'main'))).toBe(false);
    await provider.close();
  });
});

describe.skipIf(process.platform === 'win32')('O_SYNC writes', () => {
  it('opens temp files with O_SYNC and fsyncs only the directory', async () => {
    const { provider, writes } = batch(2);
    // A new location and branch first (their directories are synced as they are created), then no spares.
    await new JsonProvider().writeBatch(location, writes());
    vi.mocked(fs.open).mockClear();
    vi.mocked(fs.fsync).mockClear();
    await provider.writeBatch(location, writes());
    const temp = vi
      .mocked(fs.open)
      .mock.calls.filter(([path]) => String(path).endsWith('.tmp') && !String(path).includes('/.spare.'));
    expect(temp).toHaveLength(2);
    for (const [, flags] of temp) expect(Number(flags) & fs.constants.O_SYNC).toBe(fs.constants.O_SYNC);
    // One fsync: the directory's, after the renames.
    expect(vi.mocked(fs.fsync)).toHaveBeenCalledTimes(1);
    await provider.close();
  });

  it('with fsync: false, neither O_SYNC nor any fsync', async () => {
    const provider = new JsonProvider({ fsync: false });
    const run = createTestRun({ provider, location });
    await provider.writeBatch(location, [buildCheckpointWrite({ run }), buildCheckpointWrite({ run })]);
    const opened = vi.mocked(fs.open).mock.calls.filter(([path]) => String(path).startsWith(location));
    expect(opened.length).toBeGreaterThan(0);
    for (const [, flags] of opened) expect(Number(flags) & fs.constants.O_SYNC).toBe(0);
    expect(vi.mocked(fs.fsync)).not.toHaveBeenCalled();
    await provider.close();
  });
});

describe('work left after a write', () => {
  it('creates spares and id index entries one at a time, never filling the thread pool', async () => {
    let inFlight = 0;
    let most = 0;
    vi.mocked(fs.open).mockImplementation(((...args: unknown[]) => {
      const callback = args.at(-1) as (error: unknown, descriptor?: number) => void;
      const path = String(args[0]);
      const background = path.includes('/.spare.');
      if (background) {
        inFlight += 1;
        most = Math.max(most, inFlight);
      }
      return (actualFs.open as (...rest: unknown[]) => void)(
        ...args.slice(0, -1),
        (error: unknown, descriptor?: number) => {
          if (background) inFlight -= 1;
          callback(error, descriptor);
        },
      );
    }) as typeof fs.open);
    const { provider, writes } = batch(6);
    await provider.writeBatch(location, writes());
    await provider.close();
    expect(most).toBe(1);
    expect(indexedIds(location)).toHaveLength(6);
  });
});

/** Open descriptors of this process (Linux). */
const openDescriptors = () => readdirSync('/proc/self/fd').length;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('spares stay bounded in a long-lived process', () => {
  it.skipIf(!fs.existsSync('/proc/self/fd'))(
    'writing to many locations keeps spares (descriptors and files) for the last directory only, at most 8',
    async () => {
      const provider = new JsonProvider();
      const locations = Array.from({ length: 40 }, (_, index) => join(location, `loc-${index}`));
      const before = openDescriptors();
      for (const [index, where] of locations.entries()) {
        fs.mkdirSync(where);
        const run = createTestRun({ provider, location: where });
        await provider.writeBatch(
          where,
          Array.from({ length: 5 }, () => buildCheckpointWrite({ run })),
        );
        // Twice the group would be 10: capped at 8.
        await eventually(() => spareNames(join(where, 'main')).length === 8);
        if (index > 0) expect(spareNames(join(locations[index - 1]!, 'main'))).toEqual([]);
      }
      expect(openDescriptors() - before).toBeLessThanOrEqual(8 + 4);
      const leftOver = locations.slice(0, -1).flatMap((where) => spareNames(join(where, 'main')));
      expect(leftOver).toEqual([]);
      await provider.close();
      expect(spareNames(join(locations.at(-1)!, 'main'))).toEqual([]);
      expect(openDescriptors()).toBeLessThanOrEqual(before + 4);
    },
  );

  it('a group in flight when close() runs leaves no spares', async () => {
    const { provider, writes } = batch(3);
    const writing = provider.writeBatch(location, writes());
    await provider.close();
    await writing;
    await pause(150);
    expect(spareNames(join(location, 'main'))).toEqual([]);
  });

  it('delete also removes the spares still being created when it runs', async () => {
    // A spare's open reports back late (a busy thread pool): its file exists before delete runs.
    spareOpensLate();
    const { provider, writes } = batch(1);
    const [first] = await provider.writeBatch(location, writes());
    await eventually(() => spareNames(join(location, 'main')).length === 1);
    // While the spares of that group are still being created. The delete waits for the write's id
    // index entry, queued behind them, so it finds them all and its emptied directory goes too.
    await provider.delete(location, first!.id);
    await pause(150);
    expect(fs.existsSync(join(location, 'main')) ? spareNames(join(location, 'main')) : []).toEqual([]);
    await provider.close();
  });
});

describe('the end of a run (runEnded)', () => {
  it('removes the spares of its writes, those still being created included, before it resolves', async () => {
    // A spare's open reports back late (a busy thread pool) while the run ends.
    spareOpensLate();
    const provider = new JsonProvider();
    const run = createTestRun({ provider, location });
    await provider.writeBatch(location, [buildCheckpointWrite({ run }), buildCheckpointWrite({ run })]);
    await eventually(() => spareNames(join(location, 'main')).length >= 1);
    await provider.runEnded(location);
    expect(spareNames(join(location, 'main'))).toEqual([]);
    // Removable at once: nothing lands in it afterwards.
    rmSync(location, { recursive: true });
    await pause(100);
    expect(fs.existsSync(location)).toBe(false);
    // The next group makes spares again.
    fs.mkdirSync(location);
    await provider.writeBatch(location, [buildCheckpointWrite({ run })]);
    await eventually(() => spareNames(join(location, 'main')).length === 2);
    await provider.close();
  });
});

describe('the end of a run in another location', () => {
  // A review: any run's end dropped the spares of every other run sharing the provider (the
  // explorer's shared providers, a crew on a bus of its own), which then created its files itself.
  it('keeps the spares of the location still being written', async () => {
    const provider = new JsonProvider();
    const other = join(location, 'other');
    fs.mkdirSync(other);
    const run = createTestRun({ provider, location: other });
    await provider.writeBatch(other, [buildCheckpointWrite({ run }), buildCheckpointWrite({ run })]);
    await eventually(() => spareNames(join(other, 'main')).length === 4);
    await provider.runEnded(join(location, 'done'));
    expect(spareNames(join(other, 'main'))).toHaveLength(4);
    await provider.runEnded(other);
    expect(spareNames(join(other, 'main'))).toEqual([]);
    await provider.close();
  });
});

describe('releasing a lease', () => {
  // Called on a signal's way out, when the process is killed right after: it waits for nothing, so
  // no timer or I/O of the run still going on gets a turn (a model call paid and never stored).
  it('leaves the spares (close() removes them) and waits for no file system work', async () => {
    const provider = new JsonProvider();
    const request = { lineageId: 'run-1', checkpointId: null, owner: 'A', holder: 'crew, A', ttlMs: 20_000 };
    await provider.claimLease(location, request);
    const run = createTestRun({ provider, location });
    await provider.writeBatch(location, [buildCheckpointWrite({ run }), buildCheckpointWrite({ run })]);
    await eventually(() => spareNames(join(location, 'main')).length === 4);
    let timerRan = false;
    setTimeout(() => {
      timerRan = true;
    }, 0);
    await provider.releaseLease(location, { lineageId: 'run-1', owner: 'A' });
    expect(timerRan).toBe(false);
    await provider.close();
    expect(spareNames(join(location, 'main'))).toEqual([]);
  });
});

describe('close() and a process that ends at once', () => {
  it('removes the ready spares before it waits: a process that ends right after calling it leaves none', async () => {
    const { provider, writes } = batch(2);
    await provider.writeBatch(location, writes());
    await eventually(() => spareNames(join(location, 'main')).length === 4);
    // The runtime's signal path calls close() and raises the signal again in the same turn.
    const closing = provider.close();
    expect(spareNames(join(location, 'main'))).toEqual([]);
    await closing;
  });
});

describe('a provider used after close()', () => {
  it('creates spares again for the groups written after it', async () => {
    const { provider, writes } = batch(2);
    await provider.writeBatch(location, writes());
    await eventually(() => spareNames(join(location, 'main')).length === 4);
    await provider.close();
    expect(spareNames(join(location, 'main'))).toEqual([]);
    await provider.writeBatch(location, writes());
    await eventually(() => spareNames(join(location, 'main')).length === 4);
    await provider.close();
    expect(spareNames(join(location, 'main'))).toEqual([]);
  });
});
