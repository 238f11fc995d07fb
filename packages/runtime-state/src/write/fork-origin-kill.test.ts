// A fork stores its origin again with its first checkpoint (ForkOrigin), because the origin's own run
// may have pruned it since the restore. Stored AFTER that checkpoint, a process killed between the
// two writes left the fork's first checkpoint naming a parent that was gone for good (the tree was no
// longer recoverable from storage, SPEC §3 Fork). Each test here stops the store at every write the
// fork makes, as a kill there would, and checks what a later process finds.
import { EventBus, setLogSink, TaskCompletedEvent } from '@crewline/events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckpointWrite, StoredCheckpoint } from '../provider.js';
import { readDocument } from '../reference.js';
import { RuntimeState } from '../runtime-state.js';
import { FakeCrew } from '../test-support/fake-crew.js';
import { InMemoryProvider } from '../testing/in-memory-provider.js';

beforeEach(() => {
  // The fork logs the writes the "kill" refused; nothing to see here.
  setLogSink(() => undefined);
});
afterEach(() => {
  setLogSink(null);
});

/** Thrown by {@link KilledStore} for every write from the kill on. */
class Killed extends Error {}

/**
 * The store as the fork's process sees it: the process is killed right before its `killAt`-th write
 * (counting from 1), so that write and every later one never reach the store. `killAt` beyond the
 * writes made: no kill.
 */
class KilledStore extends InMemoryProvider {
  #writes = 0;

  constructor(
    readonly shared: InMemoryProvider,
    readonly killAt: number,
  ) {
    super();
  }

  #alive(): void {
    this.#writes += 1;
    if (this.#writes >= this.killAt) throw new Killed('killed');
  }

  override writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    this.#alive();
    return this.shared.writeSync(location, checkpoint);
  }

  override async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    this.#alive();
    return this.shared.write(location, checkpoint);
  }
}

/** A run of the fake crew, each step one completed task and one checkpoint. */
function originalRun(provider: InMemoryProvider) {
  const crew = new FakeCrew(8);
  const state = new RuntimeState({ provider, location: 'mem', entities: [crew], bus: new EventBus() });
  let step = 0;
  return {
    state,
    write(maxCheckpoints?: number) {
      crew.outputs[step] = `output ${step}`;
      state.recordEvent(new TaskCompletedEvent({ description: `task ${step}`, output: `output ${step}` }));
      step += 1;
      return state.writeCheckpointSync(maxCheckpoints === undefined ? {} : { maxCheckpoints });
    },
  };
}

/**
 * The fork's checkpoints that name a parent outside the fork which is not stored: its link to the
 * tree, lost (none: the tree is whole). Retention removes a run's own older checkpoints, so a parent
 * in the fork's own run may be gone.
 */
async function cutFromTheTree(provider: InMemoryProvider): Promise<string[]> {
  const listed = await provider.list('mem');
  const ids = new Set(listed.map((entry) => entry.id));
  const forked = listed.filter((entry) => entry.branch === 'experiment');
  const forkIds = new Set(forked.map((entry) => entry.id));
  return forked
    .filter((entry) => entry.parentId !== null && !ids.has(entry.parentId) && !forkIds.has(entry.parentId))
    .map((entry) => `${entry.id} names ${entry.parentId}, which is not stored`);
}

type Mode = 'synchronous' | 'background';

/**
 * Forks the second checkpoint of a run, lets the run prune it (when `prunedFirst`), then writes two
 * checkpoints of the fork in a process killed before its `killAt`-th write. Returns the shared store
 * after every run was pruned to its newest checkpoint by a later process.
 */
async function killedFork(mode: Mode, killAt: number, prunedFirst: boolean) {
  const shared = new InMemoryProvider();
  const run = originalRun(shared);
  const origin = [run.write(), run.write(), run.write()][1]!;
  const document = await readDocument(shared, 'mem', origin.id);
  const store = new KilledStore(shared, killAt);
  const fork = RuntimeState.fromDocument(document, {
    provider: store,
    location: 'mem',
    entities: [new FakeCrew(8)],
    bus: new EventBus(),
  });
  fork.fork('experiment');
  if (prunedFirst) {
    run.write(1);
    await run.state.settle();
    expect((await shared.list('mem')).map((entry) => entry.id)).not.toContain(origin.id);
  }
  for (let index = 0; index < 2; index += 1) {
    try {
      if (mode === 'synchronous') fork.writeCheckpointSync();
      else await fork.writeCheckpoint();
    } catch (error) {
      if (!(error instanceof Killed)) throw error;
    }
  }
  await fork.settle().catch(() => undefined);
  // A later process prunes every run to its newest checkpoint.
  await shared.prune('mem', { keep: 1 });
  return { shared, origin };
}

describe("a fork's origin, whatever write the fork's process is killed at", () => {
  for (const mode of ['synchronous', 'background'] as const) {
    for (const prunedFirst of [true, false]) {
      it(`stays in the tree (${mode} writes, origin ${prunedFirst ? 'pruned' : 'still stored'} before the fork writes)`, async () => {
        // Two checkpoints and two copies of the origin (before and after the first checkpoint): a
        // kill before each of the 4 writes, and none.
        for (let killAt = 1; killAt <= 5; killAt += 1) {
          const { shared } = await killedFork(mode, killAt, prunedFirst);
          expect({ killAt, cut: await cutFromTheTree(shared) }).toEqual({ killAt, cut: [] });
        }
      });
    }
  }

  it("is stored before the fork's first checkpoint (killed right after that copy: no fork, origin back)", async () => {
    const { shared, origin } = await killedFork('synchronous', 2, true);
    const listed = await shared.list('mem');
    expect(listed.map((entry) => entry.id)).toContain(origin.id);
    expect(listed.filter((entry) => entry.branch === 'experiment')).toEqual([]);
  });
});
