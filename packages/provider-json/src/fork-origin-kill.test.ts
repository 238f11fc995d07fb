// A fork's first checkpoint names the checkpoint it was restored from; its original run's retention
// may have removed that one since the restore, so the runtime stores it again with the fork's first
// write (runtime-state's ForkOrigin). Written after that checkpoint, a process killed between the two
// files left a fork whose first file names a parent no file holds any more: the tree could not be
// rebuilt from the files (SPEC §3 Fork). Here the fork's process "dies" before each of its writes in
// turn (nothing of it reaches the disk from then on, as with SIGKILL: a file is placed whole or not
// at all), and a later process prunes and lists the location.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus, setLogSink } from '@crewline/events';
import { GrowingCrew, growingRun, writeGrowingCheckpointsSync } from '@crewline/provider-testkit/fixtures';
import {
  type CheckpointWrite,
  RuntimeState,
  readDocument,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonProvider } from './json-provider.js';

let location: string;
beforeEach(() => {
  location = mkdtempSync(join(tmpdir(), 'crewline-json-fork-kill-'));
  // The fork logs the copy of its origin that the "kill" refused.
  setLogSink(() => undefined);
});
afterEach(() => {
  setLogSink(null);
  rmSync(location, { recursive: true, force: true });
});

/** Thrown for every write from the kill on. */
class Killed extends Error {}

/** The provider of a process killed right before its `killAt`-th write (counting from 1). */
class KilledJsonProvider extends JsonProvider {
  #writes = 0;

  constructor(readonly killAt: number) {
    super();
  }

  #alive(): void {
    this.#writes += 1;
    if (this.#writes >= this.killAt) throw new Killed('killed');
  }

  override writeSync(at: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    this.#alive();
    return super.writeSync(at, checkpoint);
  }

  override write(at: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    try {
      this.#alive();
    } catch (error) {
      return Promise.reject(error);
    }
    return super.write(at, checkpoint);
  }

  override writeBatch(at: string, checkpoints: readonly CheckpointWrite[]): Promise<StoredCheckpoint[]> {
    try {
      this.#alive();
    } catch (error) {
      return Promise.reject(error);
    }
    return super.writeBatch(at, checkpoints);
  }
}

/**
 * Restores the third checkpoint of a run, lets the run remove it (`maxCheckpoints: 2`), then writes
 * two checkpoints of a fork of it, in background (`writeCheckpoint`) or synchronously, through a
 * process killed before its `killAt`-th write. Returns the origin's id and its run's.
 */
async function killedFork(killAt: number, background: boolean) {
  const original = new JsonProvider();
  const run = growingRun({ provider: original, location, tasks: 6 });
  const origin = writeGrowingCheckpointsSync(run, 5)[2]!;
  const document = await readDocument(original, location, origin);
  const provider = new KilledJsonProvider(killAt);
  const crew = GrowingCrew.fromSnapshot(document.entities[0]!);
  const state = RuntimeState.fromDocument(document, {
    provider,
    location,
    entities: [crew],
    bus: new EventBus(),
  });
  state.fork('fork/what-if');
  run.state.writeCheckpointSync({ trigger: run.step(), maxCheckpoints: 2 });
  await run.state.settle();
  expect((await original.list(location)).map((entry) => entry.id)).not.toContain(origin);
  const fork = growingRun({ crew, state });
  for (let index = 0; index < 2; index += 1) {
    try {
      if (background) await state.writeCheckpoint({ trigger: fork.step() });
      else state.writeCheckpointSync({ trigger: fork.step() });
    } catch (error) {
      if (!(error instanceof Killed)) throw error;
    }
  }
  await state.settle().catch(() => undefined);
  await Promise.all([original.close(), provider.close()]);
  return { origin, lineageId: document.metadata.lineageId };
}

/** The fork's files naming a parent outside the fork that no file holds (none: the tree is whole). */
function cutFromTheTree(listed: readonly StoredCheckpoint[]): string[] {
  const stored = new Set(listed.map((entry) => entry.id));
  const forked = listed.filter((entry) => entry.branch === 'fork/what-if');
  const forkIds = new Set(forked.map((entry) => entry.id));
  return forked
    .filter((entry) => entry.parentId !== null && !stored.has(entry.parentId) && !forkIds.has(entry.parentId))
    .map((entry) => `${entry.id} names ${entry.parentId}, which no file holds`);
}

describe("a fork's origin removed by its run before the fork wrote, the fork's process killed", () => {
  for (const background of [false, true]) {
    it(`is never cut from the fork (${background ? 'background' : 'synchronous'} writes, a kill before each)`, async () => {
      // Two checkpoints and the copy of the origin: a kill before each of the 3 writes, and none.
      for (let killAt = 1; killAt <= 4; killAt += 1) {
        rmSync(location, { recursive: true, force: true });
        const { lineageId } = await killedFork(killAt, background);
        // A later process: the original run's retention goes on, then the whole tree is listed.
        const later = new JsonProvider();
        await later.prune(location, { keep: 1, lineageId });
        await later.prune(location, { keep: 1 });
        expect({ killAt, cut: cutFromTheTree(await later.list(location)) }).toEqual({ killAt, cut: [] });
        await later.close();
      }
    });
  }

  it("holds the origin again before the fork's first file (killed between the two: no fork yet)", async () => {
    const { origin } = await killedFork(2, false);
    const listed = await new JsonProvider().list(location);
    expect(listed.map((entry) => entry.id)).toContain(origin);
    expect(listed.filter((entry) => entry.branch === 'fork/what-if')).toEqual([]);
  });
});
