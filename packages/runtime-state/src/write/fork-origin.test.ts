// A fork is not a fork point of its origin until its first write: meanwhile the origin's own run
// may prune the origin (maxCheckpoints), and the fork's first checkpoint would name a parent that
// is gone. The fork stores its origin again right before that checkpoint (ForkOrigin; what a kill
// between the two writes leaves: fork-origin-kill.test.ts).
import { EventBus, type LogRecord, setLogSink, TaskCompletedEvent } from '@crewline/events';
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckpointWrite, StoredCheckpoint } from '../provider.js';
import { readDocument } from '../reference.js';
import { RuntimeState } from '../runtime-state.js';
import { FakeCrew } from '../test-support/fake-crew.js';
import { InMemoryProvider } from '../testing/in-memory-provider.js';

afterEach(() => {
  setLogSink(null);
});

/** The in-memory provider, refusing to store the checkpoints named in `refused`. */
class RefusingProvider extends InMemoryProvider {
  readonly refused = new Set<string>();

  override writeSync(location: string, checkpoint: CheckpointWrite): StoredCheckpoint {
    if (this.refused.has(checkpoint.metadata.id)) throw new Error('disk full');
    return super.writeSync(location, checkpoint);
  }
}

function originalRun(provider: InMemoryProvider) {
  const crew = new FakeCrew(8);
  const state = new RuntimeState({ provider, location: 'mem', entities: [crew], bus: new EventBus() });
  let step = 0;
  const write = (maxCheckpoints?: number) => {
    crew.outputs[step] = `output ${step}`;
    state.recordEvent(new TaskCompletedEvent({ description: `task ${step}`, output: `output ${step}` }));
    step += 1;
    return state.writeCheckpointSync(maxCheckpoints === undefined ? {} : { maxCheckpoints });
  };
  return { state, write };
}

/** Restores `origin` and forks it; nothing is written yet. */
async function forkOf(provider: InMemoryProvider, origin: StoredCheckpoint) {
  const document = await readDocument(provider, 'mem', origin.id);
  const fork = RuntimeState.fromDocument(document, {
    provider,
    location: 'mem',
    entities: [new FakeCrew(8)],
    bus: new EventBus(),
  });
  fork.fork('experiment');
  return { document, fork };
}

describe("a fork's origin", () => {
  it("is back in the tree when its run pruned it before the fork's first (synchronous) write", async () => {
    const provider = new InMemoryProvider();
    const run = originalRun(provider);
    const written = [run.write(), run.write(), run.write(), run.write()];
    const origin = written[1]!;
    const { document, fork } = await forkOf(provider, origin);
    run.write(2);
    await run.state.settle();
    expect((await provider.list('mem')).map((entry) => entry.id)).not.toContain(origin.id);

    const first = fork.writeCheckpointSync();
    expect(first.parentId).toBe(origin.id);
    const listed = await provider.list('mem');
    expect(listed.map((entry) => entry.id)).toContain(origin.id);
    // Stored as it was read, and from now on a fork point that its run's retention keeps.
    expect(await readDocument(provider, 'mem', origin.id)).toEqual(document);
    run.write(2);
    await run.state.settle();
    expect((await provider.list('mem')).map((entry) => entry.id)).toContain(origin.id);
  });

  it('is stored again after the first background write too', async () => {
    const provider = new InMemoryProvider();
    const run = originalRun(provider);
    const origin = [run.write(), run.write(), run.write()][0]!;
    const { fork } = await forkOf(provider, origin);
    run.write(1);
    await run.state.settle();
    const first = await fork.writeCheckpoint();
    await fork.durable();
    expect(first.parentId).toBe(origin.id);
    expect((await provider.list('mem')).map((entry) => entry.id)).toContain(origin.id);
  });

  it('goes alone, not in a group: a batch holding a checkpoint already stored is refused whole', async () => {
    // Found by a review: JSON's writeBatch refused every fork's first group (the origin was in it)
    // and the queue wrote the group again one by one, silently.
    const batches: string[][] = [];
    class BatchingProvider extends InMemoryProvider {
      async writeBatch(
        location: string,
        checkpoints: readonly CheckpointWrite[],
      ): Promise<StoredCheckpoint[]> {
        batches.push(checkpoints.map((checkpoint) => checkpoint.metadata.id));
        const stored = new Set((await this.list(location)).map((entry) => entry.id));
        if (checkpoints.some((checkpoint) => stored.has(checkpoint.metadata.id)))
          throw new Error('already stored');
        const written: StoredCheckpoint[] = [];
        for (const checkpoint of checkpoints) written.push(await this.write(location, checkpoint));
        return written;
      }
    }
    const provider = new BatchingProvider();
    const run = originalRun(provider);
    const origin = [run.write(), run.write()][0]!;
    const { fork } = await forkOf(provider, origin);
    const writes = [fork.writeCheckpoint(), fork.writeCheckpoint(), fork.writeCheckpoint()];
    await Promise.all(writes);
    await fork.durable();
    expect(batches.flat()).not.toContain(origin.id);
    expect(batches.length).toBeGreaterThan(0);
    const listed = (await provider.list('mem')).map((entry) => entry.id);
    for (const written of await Promise.all(writes)) expect(listed).toContain(written.id);
  });

  it("is written before the fork's run settles (kickoff returns after it)", async () => {
    // Found by the fuzz suite in CI: a resume that moved to a new branch returned while its origin's
    // copy was still being written, and the caller's clean-up raced with the write (ENOTEMPTY).
    let originWritten = false;
    class SlowOriginProvider extends InMemoryProvider {
      override async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
        if (checkpoint.metadata.id === originId) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          originWritten = true;
        }
        return super.write(location, checkpoint);
      }
    }
    const provider = new SlowOriginProvider();
    const run = originalRun(provider);
    const origin = [run.write(), run.write()][0]!;
    const originId = origin.id;
    const { fork } = await forkOf(provider, origin);
    await fork.writeCheckpoint();
    await fork.settle();
    expect(originWritten).toBe(true);
  });

  it('is not stored twice where it is still stored, and only with the first write', async () => {
    const provider = new InMemoryProvider();
    const run = originalRun(provider);
    const written = [run.write(), run.write()];
    const { fork } = await forkOf(provider, written[0]!);
    const forked = [fork.writeCheckpointSync(), await fork.writeCheckpoint(), fork.writeCheckpointSync()];
    const listed = await provider.list('mem');
    expect(listed.map((entry) => entry.id)).toEqual([...written, ...forked].map((entry) => entry.id));
  });

  it("when it cannot be stored again, the fork's checkpoints still are, and the failure is logged", async () => {
    const logs: LogRecord[] = [];
    setLogSink((record) => void logs.push(record));
    const provider = new RefusingProvider();
    const run = originalRun(provider);
    const origin = [run.write(), run.write(), run.write()][0]!;
    const { fork } = await forkOf(provider, origin);
    run.write(1);
    await run.state.settle();
    provider.refused.add(origin.id);
    const first = await fork.writeCheckpoint();
    const second = fork.writeCheckpointSync();
    expect(second.parentId).toBe(first.id);
    expect(logs.map((record) => record.message).join('\n')).toContain(
      `checkpoint ${origin.id}, which branch "experiment" was forked from, could not be stored again`,
    );
  });

  it('a strict checkpoint writing the queued ones ahead of it is not stopped by the origin failing', async () => {
    const logs: LogRecord[] = [];
    setLogSink((record) => void logs.push(record));
    const provider = new RefusingProvider();
    const run = originalRun(provider);
    const origin = [run.write(), run.write(), run.write()][0]!;
    const { fork } = await forkOf(provider, origin);
    run.write(1);
    await run.state.settle();
    provider.refused.add(origin.id);
    const queued = fork.writeCheckpoint();
    // Before the queue starts: the strict write stores the origin's copy and the queued fork checkpoint first.
    const strict = fork.writeCheckpointSync();
    const first = await queued;
    expect(strict.parentId).toBe(first.id);
    expect(first.parentId).toBe(origin.id);
    expect(logs.some((record) => record.message.includes(`checkpoint ${origin.id}, which branch`))).toBe(
      true,
    );
  });

  it('a resumed run (not a fork) does not store the checkpoint it came from again', async () => {
    const provider = new InMemoryProvider();
    const run = originalRun(provider);
    const origin = [run.write(), run.write(), run.write()][0]!;
    const document = await readDocument(provider, 'mem', origin.id);
    run.write(1);
    await run.state.settle();
    const resumed = RuntimeState.fromDocument(document, {
      provider,
      location: 'mem',
      entities: [new FakeCrew(8)],
      bus: new EventBus(),
    });
    resumed.writeCheckpointSync();
    expect((await provider.list('mem')).map((entry) => entry.id)).not.toContain(origin.id);
  });
});
