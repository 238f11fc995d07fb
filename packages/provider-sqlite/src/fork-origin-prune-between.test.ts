// Review R2 of 0237782: the original run (another process, or this one) prunes under maxCheckpoints
// between the fork's writes. With the origin stored again only before the fork's first checkpoint, the
// copy was, until that checkpoint landed, an old checkpoint of its run that nothing named, and such a
// prune removed it again: the fork's first checkpoint named a parent that was gone. It is stored once
// more right after that checkpoint.
import { EventBus } from '@crewline/events';
import {
  GrowingCrew,
  growingRun,
  writeGrowingCheckpoints,
  writeGrowingCheckpointsSync,
} from '@crewline/provider-testkit/fixtures';
import {
  type CheckpointWrite,
  RuntimeState,
  readDocument,
  type StoredCheckpoint,
} from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { useRecordingDatabases } from './test-support/recording-database.js';
import { RecordingProvider } from './test-support/recording-provider.js';

const setup = useRecordingDatabases();

/** Runs `between` once, right after the first write made once armed. */
class PruneBetween extends RecordingProvider {
  between: (() => Promise<void>) | undefined;
  override async write(location: string, checkpoint: CheckpointWrite): Promise<StoredCheckpoint> {
    const stored = await super.write(location, checkpoint);
    const between = this.between;
    this.between = undefined;
    if (between) await between();
    return stored;
  }
}

describe("a prune of the original run between the fork's two writes", () => {
  it("leaves the fork's first checkpoint naming a stored parent", async () => {
    const { location } = setup();
    const provider = new PruneBetween();
    const run = growingRun({ provider, location, tasks: 6 });
    const ids = writeGrowingCheckpointsSync(run, 6);
    const origin = ids[2]!;
    // Someone forked the checkpoint right after the origin earlier: that one is a fork point, kept,
    // and it continues the origin in the origin's run.
    {
      const other = await readDocument(provider, location, ids[3]!);
      const otherCrew = GrowingCrew.fromSnapshot(other.entities[0]!);
      const otherState = RuntimeState.fromDocument(other, {
        provider,
        location,
        entities: [otherCrew],
        bus: new EventBus(),
      });
      otherState.fork('fork/earlier');
      writeGrowingCheckpointsSync(growingRun({ crew: otherCrew, state: otherState }), 1);
    }
    const document = await readDocument(provider, location, origin);
    const crew = GrowingCrew.fromSnapshot(document.entities[0]!);
    const state = RuntimeState.fromDocument(document, {
      provider,
      location,
      entities: [crew],
      bus: new EventBus(),
    });
    state.fork('fork/experiment');
    // The original run goes on with maxCheckpoints 2 before the fork writes: the origin is gone.
    run.state.writeCheckpointSync({ trigger: run.step(), maxCheckpoints: 2 });
    await run.state.settle();
    expect((await provider.list(location)).map((entry) => entry.id)).not.toContain(origin);
    // ...and once more between the fork's two writes (its next checkpoint, its retention).
    provider.between = async () => {
      run.state.writeCheckpointSync({ trigger: run.step(), maxCheckpoints: 2 });
      await run.state.settle();
    };
    const [first] = await writeGrowingCheckpoints(growingRun({ crew, state }), 1);
    await state.settle();
    const listed = await provider.list(location);
    expect(listed.find((entry) => entry.id === first)!.parentId).toBe(origin);
    expect(listed.map((entry) => entry.id)).toContain(origin);
    provider.close();
  });
});
