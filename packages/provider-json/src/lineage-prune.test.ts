// The prune of one run (`maxCheckpoints`: `{ keep, lineageId }` after each of its writes) reads its
// own branch and what is linked to its checkpoints, not the whole location: a location holding
// thousands of checkpoints of other runs made each write of a run with retention read them all.
// It still keeps every fork point, wherever and whenever the fork was written.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import { type CheckpointWrite, planPrune } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JsonProvider } from './json-provider.js';

/** The directories listed and files opened while `recording` (paths relative to the location). */
const recorded = { directories: [] as string[], files: [] as string[] };
let recording = false;

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  const readdir = ((path: string, ...rest: unknown[]) => {
    if (recording) recorded.directories.push(String(path));
    return (actual.readdir as (...parameters: unknown[]) => unknown)(path, ...rest);
  }) as typeof actual.readdir;
  const open = ((path: string, ...rest: unknown[]) => {
    if (recording) recorded.files.push(String(path));
    return (actual.open as (...parameters: unknown[]) => unknown)(path, ...rest);
  }) as typeof actual.open;
  return { ...actual, readdir, open };
});
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const readdirSync = ((path: string, ...rest: unknown[]) => {
    if (recording) recorded.directories.push(String(path));
    return (actual.readdirSync as (...parameters: unknown[]) => unknown)(path, ...rest);
  }) as typeof actual.readdirSync;
  return { ...actual, readdirSync };
});

let location: string;
beforeEach(() => {
  location = mkdtempSync(join(tmpdir(), 'crewline-json-lineage-prune-'));
});
afterEach(() => rmSync(location, { recursive: true, force: true }));

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

/** Sets the times of every directory under the location (itself included) a minute back: settled. */
function settleDirectories(directory = location): void {
  for (const entry of readdirSync(directory, { withFileTypes: true }))
    if (entry.isDirectory()) settleDirectories(join(directory, entry.name));
  const minuteAgo = new Date(Date.now() - 60_000);
  utimesSync(directory, minuteAgo, minuteAgo);
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
    settleDirectories();

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
    settleDirectories();

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
    settleDirectories();
    writeRun(elsewhere, 'recent', 'recent', 2);

    const provider = new JsonProvider({ fsync: false });
    writeRun(provider, 'run', 'main', 2);
    await provider.prune(location, { keep: 1, lineageId: 'run' });
    const again = await readBy(() => provider.prune(location, { keep: 1, lineageId: 'run' }));
    // The location and main changed just before too (recent and main were created); settled did not.
    expect(again.directories).toEqual(['', 'main', 'recent']);
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
