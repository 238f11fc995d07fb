// The prune of one run (`maxCheckpoints`: `{ keep, lineageId }` after each of its writes) reads its
// own branch and what is linked to its checkpoints, not the whole location: a location holding
// thousands of checkpoints of other runs made each write of a run with retention read them all.
// It still keeps every fork point, wherever and whenever the fork was written.
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { lstat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative, sep } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import { type CheckpointWrite, type LeaseRequest, planPrune } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JsonProvider } from '../json-provider.js';

/** The directories listed and files opened while `recording` (paths relative to the location). */
const recorded = { directories: [] as string[], files: [] as string[] };
let recording = false;
/** Called (once) when a prune opens its first file: after its listing, before its removals. */
let onFirstOpen: (() => void) | undefined;

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  const readdir = ((path: string, ...rest: unknown[]) => {
    if (recording) recorded.directories.push(String(path));
    return (actual.readdir as (...parameters: unknown[]) => unknown)(path, ...rest);
  }) as typeof actual.readdir;
  const open = ((path: string, ...rest: unknown[]) => {
    if (recording) recorded.files.push(String(path));
    const hook = onFirstOpen;
    onFirstOpen = undefined;
    hook?.();
    return (actual.open as (...parameters: unknown[]) => unknown)(path, ...rest);
  }) as typeof actual.open;
  return { ...actual, readdir, open };
});
/**
 * The file system's clock as the prune sees it (the times of the `lstat`s it takes, all with
 * `bigint`): `settledBefore` sets every time before it a minute back, so that what changed before it
 * looks long settled while what changes after it looks just changed (utimes cannot fake that: it
 * sets the mtime, never the ctime); `coarseFrom` reports every time from it on as that one time, a
 * clock whose tick lasts the rest of the test (ext4 before Linux 6.13 ticks every 4 ms, ext2 every
 * second: a name added in the tick of a listing leaves the directory's times as they were).
 */
const fileSystemClock: { settledBefore?: bigint; coarseFrom?: bigint } = {};
/**
 * An NFS client's attribute cache: while `on`, the first stats read of each directory of the
 * location (its `bigint` stats, as the prune and the claim read them; not the hidden lock and
 * index directories) are given again for it, whatever changed since (`lstat` within `acdirmin`
 * answers from the cache; `opendir` revalidates, so a listing sees the new names).
 */
const attributeCache = { on: false, stats: new Map<string, unknown>() };

function cachedStats(path: unknown, read: () => unknown): unknown {
  if (!attributeCache.on || String(path).includes(`${sep}.`)) return read();
  const known = attributeCache.stats.get(String(path));
  if (known !== undefined) return known;
  const stats = read();
  if (typeof (stats as { ctimeNs?: unknown } | undefined)?.ctimeNs === 'bigint')
    attributeCache.stats.set(String(path), stats);
  return stats;
}

function asSeen(timeNs: bigint): bigint {
  const { settledBefore, coarseFrom } = fileSystemClock;
  if (coarseFrom !== undefined && timeNs >= coarseFrom) return coarseFrom;
  if (settledBefore !== undefined && timeNs < settledBefore) return timeNs - 60_000_000_000n;
  return timeNs;
}

function seenStats(stats: unknown): unknown {
  if (typeof (stats as { ctimeNs?: unknown } | undefined)?.ctimeNs !== 'bigint') return stats;
  const seen = Object.create(Object.getPrototypeOf(stats)) as Record<string, unknown>;
  Object.assign(seen, stats);
  seen.mtimeNs = asSeen(seen.mtimeNs as bigint);
  seen.ctimeNs = asSeen(seen.ctimeNs as bigint);
  return seen;
}

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const readdirSync = ((path: string, ...rest: unknown[]) => {
    if (recording) recorded.directories.push(String(path));
    return (actual.readdirSync as (...parameters: unknown[]) => unknown)(path, ...rest);
  }) as typeof actual.readdirSync;
  const lstatSync = ((...parameters: unknown[]) =>
    cachedStats(parameters[0], () =>
      seenStats((actual.lstatSync as (...parameters: unknown[]) => unknown)(...parameters)),
    )) as typeof actual.lstatSync;
  const statSync = ((...parameters: unknown[]) =>
    cachedStats(parameters[0], () =>
      seenStats((actual.statSync as (...parameters: unknown[]) => unknown)(...parameters)),
    )) as typeof actual.statSync;
  return { ...actual, readdirSync, lstatSync, statSync };
});

let location: string;
beforeEach(() => {
  location = mkdtempSync(join(tmpdir(), 'crewline-json-lineage-prune-'));
});
afterEach(() => {
  onFirstOpen = undefined;
  fileSystemClock.settledBefore = undefined;
  fileSystemClock.coarseFrom = undefined;
  attributeCache.on = false;
  attributeCache.stats.clear();
  vi.useRealTimers();
  rmSync(location, { recursive: true, force: true });
});

/** The file system's time now (the ctime of a directory made for it; read unmocked: node:fs/promises). */
async function fileSystemNow(): Promise<bigint> {
  const probe = mkdtempSync(join(tmpdir(), 'crewline-json-clock-'));
  try {
    return (await lstat(probe, { bigint: true })).ctimeNs;
  } finally {
    rmSync(probe, { recursive: true });
  }
}

/** A time the file system is past: what changed until now (its tick included) is before it. */
async function afterNow(): Promise<bigint> {
  const now = await fileSystemNow();
  // The next tick of the coarsest clock the kernel may use for file times (a jiffy).
  await new Promise((resolve) => setTimeout(resolve, 20));
  return now + 1n;
}

/** The directories `prune` listed and the checkpoint files it opened, relative to the location, each once. */
async function readBy<T>(
  prune: () => Promise<T>,
): Promise<{ result: T; directories: string[]; files: string[] }> {
  recorded.directories = [];
  recorded.files = [];
  recording = true;
  try {
    const result = await prune();
    const relativeTo = (paths: string[]) =>
      [...new Set(paths.map((path) => relative(location, path)))].sort();
    return {
      result,
      directories: relativeTo(recorded.directories),
      files: relativeTo(recorded.files.filter((path) => path.endsWith('.json'))),
    };
  } finally {
    recording = false;
  }
}

function checkpoint(lineageId: string, branch: string, parentId: string | null): CheckpointWrite {
  return buildCheckpointWrite({ metadata: { lineageId, branch, parentId } });
}

/** Writes a chain of `count` checkpoints of one run with `provider`; returns their ids. */
function writeRun(provider: JsonProvider, lineageId: string, branch: string, count: number): string[] {
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1)
    ids.push(provider.writeSync(location, checkpoint(lineageId, branch, ids.at(-1) ?? null)).id);
  return ids;
}

/**
 * Makes every directory of the location as it is now look changed a minute ago (its mtime and its
 * ctime, on the file system's clock as the prune reads it), while what changes after this does not.
 */
async function settleDirectories(): Promise<void> {
  fileSystemClock.settledBefore = await afterNow();
}

describe("the prune of one run (a run's maxCheckpoints)", () => {
  it("lists its own branch and reads its own files, never other branches' directories or files", async () => {
    // Other runs, written by other processes: 12 branches of 5 checkpoints and 2 runs on main.
    const elsewhere = new JsonProvider({ fsync: false });
    for (let index = 0; index < 12; index += 1) writeRun(elsewhere, `other-${index}`, `other/${index}`, 5);
    const othersOnMain = [
      ...writeRun(elsewhere, 'main-a', 'main', 4),
      ...writeRun(elsewhere, 'main-b', 'main', 4),
    ];
    await settleDirectories();

    const provider = new JsonProvider({ fsync: false });
    const written: string[] = [];
    const reads: { directories: string[]; files: string[] }[] = [];
    for (let index = 0; index < 6; index += 1) {
      written.push(provider.writeSync(location, checkpoint('run', 'main', written.at(-1) ?? null)).id);
      reads.push(await readBy(() => provider.prune(location, { keep: 2, lineageId: 'run' })));
    }
    // The first prune lists the location once; each later one lists main alone and reads only the
    // file written since (the heads of the other files on main are known by then).
    expect(reads[0]!.directories).toContain(join('other', '11'));
    for (const read of reads.slice(1)) {
      expect(read.directories).toEqual(['main']);
      expect(read.files).toHaveLength(1);
    }
    expect(reads.slice(1).map((read) => read.files[0])).toEqual(
      written.slice(1).map((id, index) => join('main', `${id}_p-${written[index]}.json`)),
    );
    expect(readdirSync(join(location, 'main')).sort()).toEqual(
      [
        ...othersOnMain.map(
          (id, index) => `${id}_p-${index % 4 === 0 ? 'none' : othersOnMain[index - 1]}.json`,
        ),
        `${written[4]}_p-${written[3]}.json`,
        `${written[5]}_p-${written[4]}.json`,
      ].sort(),
    );
  });

  it('keeps a fork point whose fork another process wrote on another branch after the location was listed', async () => {
    const elsewhere = new JsonProvider({ fsync: false });
    writeRun(elsewhere, 'unrelated', 'fork/x', 2);
    await settleDirectories();

    const provider = new JsonProvider({ fsync: false });
    const written: string[] = [];
    const writeAndPrune = async () => {
      written.push(provider.writeSync(location, checkpoint('run', 'main', written.at(-1) ?? null)).id);
      return (await provider.prune(location, { keep: 1, lineageId: 'run' })).removed.map((entry) => entry.id);
    };
    expect(await writeAndPrune()).toEqual([]);
    expect(await writeAndPrune()).toEqual([written[0]]);
    // Another process forks the run's newest checkpoint, in a directory listed (and settled) already,
    // and another fork of it in a new directory.
    const fork = elsewhere.writeSync(location, checkpoint('fork', 'fork/x', written[1]!)).id;
    const secondFork = elsewhere.writeSync(location, checkpoint('fork-2', 'fork/y/z', written[1]!)).id;
    expect(await writeAndPrune()).toEqual([]);
    expect(await writeAndPrune()).toEqual([written[2]]);
    const kept = (await provider.list(location)).map((entry) => entry.id);
    expect(kept).toEqual(expect.arrayContaining([written[1], written[3], fork, secondFork]));
    expect(kept).not.toContain(written[2]);
  });

  it('lists again a directory that had changed just before it was listed, even when its times did not move since', async () => {
    // A file system keeps coarse times: a name added in the tick of the listing would not move them.
    const elsewhere = new JsonProvider({ fsync: false });
    writeRun(elsewhere, 'settled', 'settled', 2);
    await settleDirectories();
    writeRun(elsewhere, 'recent', 'recent', 2);

    const provider = new JsonProvider({ fsync: false });
    writeRun(provider, 'run', 'main', 2);
    await provider.prune(location, { keep: 1, lineageId: 'run' });
    const again = await readBy(() => provider.prune(location, { keep: 1, lineageId: 'run' }));
    // The location and main changed just before too (recent and main were created); settled did not.
    expect(again.directories).toEqual(['', 'main', 'recent']);
  });

  it('keeps a fork point whose fork was written into a directory whose mtime was set back (a restore), in one tick of a coarse clock', async () => {
    // The fork's directory came from a backup (cp -a, rsync, tar): its mtime is old, its ctime is not.
    const elsewhere = new JsonProvider({ fsync: false });
    writeRun(elsewhere, 'unrelated', 'fork/x', 2);
    const restored = join(location, 'fork', 'x');
    const minuteAgo = new Date(Date.now() - 60_000);
    fileSystemClock.coarseFrom = await afterNow();
    utimesSync(restored, minuteAgo, minuteAgo);

    const provider = new JsonProvider({ fsync: false });
    const written = writeRun(provider, 'run', 'main', 2);
    expect(
      (await provider.prune(location, { keep: 1, lineageId: 'run' })).removed.map((entry) => entry.id),
    ).toEqual([written[0]]);
    // Another process forks the run's newest checkpoint there, and the directory's mtime is set back
    // again (a second restore; `touch -d`), all in the tick the prune listed it in.
    elsewhere.writeSync(location, checkpoint('fork', 'fork/x', written[1]!));
    utimesSync(restored, minuteAgo, minuteAgo);
    written.push(provider.writeSync(location, checkpoint('run', 'main', written[1]!)).id);
    expect((await provider.prune(location, { keep: 1, lineageId: 'run' })).removed).toEqual([]);
    expect((await provider.list(location)).map((entry) => entry.id)).toContain(written[1]);
  });

  it("keeps a fork point when this process's clock is ahead of the file system's (a faked Date, an NFS server behind)", async () => {
    const elsewhere = new JsonProvider({ fsync: false });
    writeRun(elsewhere, 'unrelated', 'fork/x', 2);
    fileSystemClock.coarseFrom = await afterNow();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 60 * 60_000);

    const provider = new JsonProvider({ fsync: false });
    const written = writeRun(provider, 'run', 'main', 2);
    expect(
      (await provider.prune(location, { keep: 1, lineageId: 'run' })).removed.map((entry) => entry.id),
    ).toEqual([written[0]]);
    // A fork written in the tick the prune listed its directory in: the directory's times do not move.
    elsewhere.writeSync(location, checkpoint('fork', 'fork/x', written[1]!));
    written.push(provider.writeSync(location, checkpoint('run', 'main', written[1]!)).id);
    expect((await provider.prune(location, { keep: 1, lineageId: 'run' })).removed).toEqual([]);
    expect((await provider.list(location)).map((entry) => entry.id)).toContain(written[1]);
  });

  it('removes exactly what a prune of the whole listing removes, forks, fork starts and resumes included', async () => {
    const provider = new JsonProvider({ fsync: false });
    // run-a on main, resumed from an older checkpoint; fork-b from it on another branch, and a
    // fork of the fork; fork-c from it on main itself; run-d beside them on main.
    const a = writeRun(provider, 'run-a', 'main', 4);
    let parent = a[1]!;
    for (let index = 0; index < 3; index += 1)
      parent = provider.writeSync(location, checkpoint('run-a', 'main', parent)).id;
    const b = [provider.writeSync(location, checkpoint('fork-b', 'b', a[2]!)).id];
    for (let index = 0; index < 4; index += 1)
      b.push(provider.writeSync(location, checkpoint('fork-b', 'b', b.at(-1)!)).id);
    const bb = provider.writeSync(location, checkpoint('fork-bb', 'b/b', b[2]!)).id;
    provider.writeSync(location, checkpoint('fork-bb', 'b/b', bb));
    let c = provider.writeSync(location, checkpoint('fork-c', 'main', a[3]!)).id;
    for (let index = 0; index < 3; index += 1)
      c = provider.writeSync(location, checkpoint('fork-c', 'main', c)).id;
    writeRun(provider, 'run-d', 'main', 5);
    mkdirSync(join(location, 'empty', 'branch'), { recursive: true });

    const all = await provider.list(location);
    for (const lineageId of ['run-a', 'fork-b', 'fork-bb', 'fork-c', 'run-d'])
      for (const keep of [1, 2, 3]) {
        const expected = planPrune(all, { keep, lineageId }).map((entry) => entry.id);
        const pruned = await provider.prune(location, { keep, lineageId, dryRun: true });
        expect(
          pruned.removed.map((entry) => entry.id),
          `${lineageId}, keep ${keep}`,
        ).toEqual(expected);
        expect(pruned.removed).toEqual(all.filter((entry) => expected.includes(entry.id)));
      }
  });
});

describe('the claim of a lineage as new (a @persist() state, claimed at each nested kickoff)', () => {
  // It answers from the runs this provider keeps by file name, and lists every directory again:
  // a checkpoint of the lineage it missed would be a state run (and paid for) twice.
  const request = (owner: string): LeaseRequest => ({
    lineageId: 'state-x',
    owner,
    checkpointId: null,
    holder: `flow X, ${owner}`,
    ttlMs: 20_000,
  });
  const claimAndRelease = async (provider: JsonProvider, owner: string) => {
    await provider.claimLease(location, request(owner));
    await provider.releaseLease(location, { lineageId: 'state-x', owner });
  };

  it.each(['main', 'flow-states/report-1', 'new/deep/branch'])(
    'sees a checkpoint of the lineage another process wrote on %s after its listings had settled',
    async (branch) => {
      const elsewhere = new JsonProvider({ fsync: false });
      for (let index = 0; index < 3; index += 1) writeRun(elsewhere, `other-${index}`, 'main', 2);
      writeRun(elsewhere, 'other-state', 'flow-states/report-1', 2);
      const provider = new JsonProvider({ fsync: false });
      await claimAndRelease(provider, 'A');
      await settleDirectories();
      await claimAndRelease(provider, 'B');
      const head = writeRun(elsewhere, 'state-x', branch, 1)[0];
      await expect(provider.claimLease(location, request('C'))).rejects.toMatchObject({
        code: 'conflict',
        details: { headId: head },
      });
    },
  );

  it("sees it when the directories' stats are an NFS client's cached ones from before it was written", async () => {
    const elsewhere = new JsonProvider({ fsync: false });
    for (let index = 0; index < 3; index += 1) writeRun(elsewhere, `other-${index}`, 'main', 2);
    writeRun(elsewhere, 'other-state', 'flow-states/report-1', 2);
    await settleDirectories();
    const provider = new JsonProvider({ fsync: false });
    attributeCache.on = true;
    await claimAndRelease(provider, 'A');
    const head = writeRun(elsewhere, 'state-x', 'flow-states/report-1', 1)[0];
    const claimed = await readBy(() =>
      provider.claimLease(location, request('B')).catch((error: unknown) => error),
    );
    expect(claimed.result).toMatchObject({ code: 'conflict', details: { headId: head } });
    // Every directory was listed again, and only the new file read (the runs of the others are kept).
    expect(claimed.directories).toEqual(
      expect.arrayContaining(['', 'main', join('flow-states', 'report-1')]),
    );
    expect(claimed.files).toEqual([
      relative(location, (await elsewhere.list(location)).find((entry) => entry.id === head)!.reference),
    ]);
  });
});

describe('a fork that cannot be read', () => {
  // Its file name still says which checkpoint it forks: that one is a fork point all the same.
  const damages = {
    'larger than maxCheckpointBytes': (path: string) => appendFileSync(path, ' '.repeat(5_000)),
    damaged: (path: string) => writeFileSync(path, '{"not a checkpoint'),
  };
  for (const [damage, spoil] of Object.entries(damages))
    for (const scope of ['the prune of its run', 'a prune of every run'] as const)
      it(`keeps the fork point its name gives (${damage}; ${scope})`, async () => {
        const provider = new JsonProvider({ fsync: false, maxCheckpointBytes: 4_096 });
        const written = writeRun(provider, 'run', 'main', 1);
        const fork = new JsonProvider({ fsync: false }).writeSync(
          location,
          checkpoint('fork', 'fork/a', written[0]!),
        );
        spoil(fork.reference);
        for (let index = 0; index < 2; index += 1) {
          written.push(provider.writeSync(location, checkpoint('run', 'main', written.at(-1)!)).id);
          const options = scope === 'a prune of every run' ? { keep: 1 } : { keep: 1, lineageId: 'run' };
          await provider.prune(location, options);
        }
        const kept = (await provider.list(location)).map((entry) => entry.id);
        expect(kept).toContain(written[0]);
        // The run's own retention goes on: what lies between the fork point and its newest goes.
        expect(kept).not.toContain(written[1]);
        expect(readdirSync(join(location, 'fork', 'a'))).toEqual([basename(fork.reference)]);
      });
});

describe('a fork written while a prune runs', () => {
  // Written after the prune listed the location, before it removes anything: its directories are
  // looked at again right before the removals.
  for (const scope of ['the prune of its run', 'a prune of every run'] as const)
    it(`keeps the fork point (${scope})`, async () => {
      const provider = new JsonProvider({ fsync: false });
      const written = writeRun(provider, 'run', 'main', 3);
      let fork: string | undefined;
      onFirstOpen = () => {
        fork = new JsonProvider({ fsync: false }).writeSync(
          location,
          checkpoint('fork', 'fork/late', written[0]!),
        ).id;
      };
      const options = scope === 'a prune of every run' ? { keep: 1 } : { keep: 1, lineageId: 'run' };
      const removed = (await provider.prune(location, options)).removed.map((entry) => entry.id);
      expect(fork).toBeDefined();
      expect(removed).toEqual([written[1]]);
      expect((await provider.list(location)).map((entry) => entry.id).sort()).toEqual(
        [written[0], written[2], fork].sort(),
      );
    });
});
