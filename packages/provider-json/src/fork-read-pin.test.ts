// A fork reads its parent checkpoint long before it writes its first file (by default at the end of
// its first task, after a model call). A prune of the run it forked from that ran in between found
// no file naming that parent and removed it: the fork's first checkpoint then named a parent that no
// longer existed (SPEC §3 "Fork": the tree must be recoverable from storage alone). Two providers
// on one location stand for the two processes.
import { type ChildProcess, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckpointWrite } from '@crewline/provider-testkit/fixtures';
import type { CheckpointWrite } from '@crewline/runtime-state';
import { thisProcess } from '@crewline/runtime-state/internal';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonProvider } from './json-provider.js';
import { resetTempFileSweeps } from './temp-sweep.js';
import { writerNameDigits } from './temp-writer.js';
import { spawnScript, waitForSuccess } from './test-support/spawn.js';

let location: string;
const children: ChildProcess[] = [];
beforeEach(() => {
  location = mkdtempSync(join(tmpdir(), 'crewline-json-fork-read-'));
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  rmSync(location, { recursive: true, force: true });
});

const pins = () =>
  existsSync(join(location, '.pins'))
    ? readdirSync(join(location, '.pins')).filter((name) => name.endsWith('.pin'))
    : [];

/** Starts test-support/fork-reader.ts reading `id`; resolves once it read it (`wait`) or ended (`exit`). */
async function readInAnotherProcess(id: string, mode: 'exit' | 'wait'): Promise<ChildProcess> {
  const child = spawnScript('./fork-reader.ts', [location, id, mode]);
  children.push(child);
  if (mode === 'exit') {
    await waitForSuccess(child, 'fork reader');
    return child;
  }
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString('utf8').startsWith('ready')) resolve();
    });
    child.on('exit', (code, signal) => reject(new Error(`fork reader ended early (${signal ?? code})`)));
  });
  return child;
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

async function listedIds(provider: JsonProvider): Promise<string[]> {
  return (await provider.list(location)).map((entry) => entry.id).sort();
}

const scopes = [
  { scope: 'the prune of its run (maxCheckpoints)', options: { keep: 1, lineageId: 'run' } },
  { scope: 'a prune of every run', options: { keep: 1 } },
] as const;

describe('a fork that read its parent before a prune and writes its first file after it', () => {
  for (const { scope, options } of scopes)
    it(`keeps the parent (${scope})`, async () => {
      const run = new JsonProvider({ fsync: false });
      const written = writeRun(run, 'run', 'main', 4);
      const parent = written[1]!;
      // The fork (another process) restores its parent: read before the prune takes any look.
      const fork = new JsonProvider({ fsync: false });
      await fork.read(location, parent);

      // The parent stays, and so does the checkpoint of its run after it (removed, nothing of the
      // run would continue the parent: a second head of the run, which no prune removes).
      const removed = (await run.prune(location, options)).removed.map((entry) => entry.id);
      expect(removed).toEqual([written[0]]);

      // Its first task ended: its first checkpoint names the parent.
      const first = (await fork.write(location, checkpoint('fork', 'fork/late', parent))).id;
      expect(await listedIds(run)).toEqual([parent, written[2], written[3], first].sort());
      await expect(run.read(location, parent)).resolves.toBeDefined();
      // A fork point from then on: kept by the fork's file, while the rest of its run goes.
      expect((await run.prune(location, options)).removed.map((entry) => entry.id)).toEqual([written[2]]);
      expect(await listedIds(run)).toEqual([parent, written[3], first].sort());
    });

  it("lets the parent go once the fork's first file names it (a fork point from then on), and not before", async () => {
    const run = new JsonProvider({ fsync: false });
    const written = writeRun(run, 'run', 'main', 3);
    const fork = new JsonProvider({ fsync: false });
    await fork.read(location, written[0]!);
    expect(pins()).toHaveLength(1);
    const first = fork.writeSync(location, checkpoint('fork', 'fork/a', written[0]!)).id;
    // The pin is gone: the fork's file keeps its parent, in this prune and every later one.
    expect(pins()).toEqual([]);
    expect(
      (await run.prune(location, { keep: 1, lineageId: 'run' })).removed.map((entry) => entry.id),
    ).toEqual([written[1]]);
    expect(await listedIds(run)).toEqual([written[0], written[2], first].sort());
  });

  it('keeps a checkpoint this process read more often than it wrote after it until the process exits', async () => {
    const run = new JsonProvider({ fsync: false });
    const written = writeRun(run, 'run', 'main', 3);
    // Read twice (a fork, and the TUI's detail panel), named once (the fork's first file).
    const reader = new JsonProvider({ fsync: false });
    await reader.read(location, written[1]!);
    await reader.read(location, written[1]!);
    const first = reader.writeSync(location, checkpoint('resumed', 'resumed', written[1]!)).id;
    await run.delete(location, first);
    expect(
      (await run.prune(location, { keep: 1, lineageId: 'run' })).removed.map((entry) => entry.id),
    ).toEqual([written[0]]);
  });

  it('does not keep a checkpoint read by a process that is gone, and removes its pin', async () => {
    const run = new JsonProvider({ fsync: false });
    const written = writeRun(run, 'run', 'main', 3);
    // A process of this pid space that read written[0] and was killed before its fork wrote anything.
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    mkdirSync(join(location, '.pins'));
    const pin = join(location, '.pins', `${written[0]}.${gone}.${writerNameDigits()}.pin`);
    writeFileSync(pin, '');
    const removed = (await run.prune(location, { keep: 1, lineageId: 'run' })).removed.map(
      (entry) => entry.id,
    );
    expect(removed).toEqual([written[0], written[1]]);
    expect(existsSync(pin)).toBe(false);
  });

  it('leaves listings as they were: the pin is no branch, no checkpoint and no unreadable file', async () => {
    const run = new JsonProvider({ fsync: false });
    const written = writeRun(run, 'run', 'main', 2);
    const before = await run.listWithUnreadable(location);
    await new JsonProvider({ fsync: false }).read(location, written[0]!);
    expect(readdirSync(location).sort()).toEqual(['.ids', '.pins', 'main']);
    expect(await run.listWithUnreadable(location)).toEqual(before);
    expect((await run.latest(location))?.id).toBe(written[1]);
  });

  it('reads a standalone checkpoint file without writing anything beside it', async () => {
    const run = new JsonProvider({ fsync: false });
    const [id] = writeRun(run, 'run', 'main', 1);
    const reference = (await run.list(location))[0]!.reference;
    const copy = join(location, 'saved.json');
    writeFileSync(copy, readFileSync(reference));
    const parsed = run.parseReference(copy)!;
    await run.read(parsed.location, id!);
    expect(readdirSync(location).sort()).toEqual(['.ids', 'main', 'saved.json']);
  });

  it('reads a checkpoint a prune is removing as not found: a read waits for the prune holding the mutex', async () => {
    const run = new JsonProvider({ fsync: false });
    const written = writeRun(run, 'run', 'main', 2);
    const [reference] = (await run.list(location)).map((entry) => entry.reference);
    // A prune in another process, between its look at the pins and its removals, holds the mutex.
    mkdirSync(join(location, '.pins'));
    const mutex = join(location, '.pins', 'prune.takeover');
    writeFileSync(mutex, JSON.stringify(thisProcess()));
    const reading = new JsonProvider({ fsync: false }).read(location, written[0]!);
    const outcome = reading.then(
      () => 'read',
      (error: { code?: string }) => error.code,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    rmSync(reference!);
    rmSync(mutex);
    expect(await outcome).toBe('not_found');
    expect(pins()).toEqual([]);
  });
});

describe("a read pin's end", () => {
  it('goes when the process that read exits', async () => {
    const written = writeRun(new JsonProvider({ fsync: false }), 'run', 'main', 2);
    await readInAnotherProcess(written[0]!, 'exit');
    expect(pins()).toEqual([]);
  });

  it('keeps the checkpoint while the process that read runs; once it is killed, the next prune removes both', async () => {
    const run = new JsonProvider({ fsync: false });
    const written = writeRun(run, 'run', 'main', 3);
    const reader = await readInAnotherProcess(written[0]!, 'wait');
    expect(pins()).toHaveLength(1);
    // The pinned checkpoint and the one of its run after it stay.
    expect((await run.prune(location, { keep: 1, lineageId: 'run' })).removed).toEqual([]);
    reader.kill('SIGKILL');
    await new Promise((resolve) => reader.on('exit', resolve));
    expect(pins()).toHaveLength(1);
    expect(
      (await run.prune(location, { keep: 1, lineageId: 'run' })).removed.map((entry) => entry.id),
    ).toEqual([written[0], written[1]]);
    expect(pins()).toEqual([]);
  });

  it("of a killed process is removed by the next process's first use of the location", async () => {
    const written = writeRun(new JsonProvider({ fsync: false }), 'run', 'main', 1);
    const reader = await readInAnotherProcess(written[0]!, 'wait');
    reader.kill('SIGKILL');
    await new Promise((resolve) => reader.on('exit', resolve));
    expect(pins()).toHaveLength(1);
    resetTempFileSweeps();
    new JsonProvider({ fsync: false }).writeSync(location, checkpoint('other', 'other', null));
    expect(pins()).toEqual([]);
  });
});
