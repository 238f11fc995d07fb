import { CrewlineError } from '@crewline/events';
import { type GrowingRun, growingRun } from '@crewline/provider-testkit/fixtures';
import { type CheckpointWrite, createCheckpointWrite, encodeValue } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { useRecordingDatabases } from './test-support/recording-database.js';

const setup = useRecordingDatabases();

/**
 * The next checkpoint of `run` as the runtime would hand it over (one more event, its parent the
 * previous write), without writing it.
 */
function nextWrites(run: GrowingRun, count: number, parent?: CheckpointWrite): CheckpointWrite[] {
  const writes: CheckpointWrite[] = [];
  let previous = parent;
  for (let index = 0; index < count; index += 1) {
    const { metadata, entities } = run.state.snapshot(run.step());
    const write = createCheckpointWrite({
      metadata: { ...metadata, parentId: previous?.metadata.id ?? null, eventCount: run.state.events.length },
      inputs: encodeValue(run.state.inputs),
      entities,
      events: run.state.events.slice(),
      parentEventCount: previous?.metadata.eventCount ?? 0,
    });
    writes.push(write);
    previous = write;
  }
  return writes;
}

describe('group commit (SqliteProvider.writeBatch)', () => {
  it('stores a group in order, each checkpoint continuing the one before it and read back byte for byte', async () => {
    const { provider, location } = setup();
    const run = growingRun({ tasks: 6, outputBytes: 900 });
    const first = nextWrites(run, 4);
    const stored = await provider.writeBatch(location, first);
    const second = nextWrites(run, 5, first.at(-1));
    stored.push(...(await provider.writeBatch(location, second)));
    expect(stored.map((checkpoint) => checkpoint.id)).toEqual(
      [...first, ...second].map((write) => write.metadata.id),
    );
    const listed = await provider.list(location);
    expect(listed.map((checkpoint) => checkpoint.parentId)).toEqual([
      null,
      ...stored.slice(0, -1).map((checkpoint) => checkpoint.id),
    ]);
    expect(await provider.mismatches(location)).toEqual([]);
  });

  it('stores nothing of a group that fails, and the next write does not continue what it rolled back', async () => {
    const { provider, location } = setup();
    const run = growingRun({ tasks: 6, outputBytes: 900 });
    const [root] = nextWrites(run, 1);
    await provider.writeBatch(location, [root!]);
    const [kept, clashing] = nextWrites(run, 2, root);
    // The second checkpoint of the group takes an id already stored: the whole group rolls back.
    const duplicate = { ...clashing!, metadata: { ...clashing!.metadata, id: root!.metadata.id } };
    const failure = await provider.writeBatch(location, [kept!, duplicate]).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'conflict')).toBe(true);
    expect((await provider.list(location)).map((checkpoint) => checkpoint.id)).toEqual([root!.metadata.id]);
    // A checkpoint naming the rolled-back one as its parent is stored whole (its parent is not
    // there), not as a continuation of events and chunks that no longer exist.
    const [orphan] = nextWrites(run, 1, kept);
    provider.written.clear();
    provider.writeSync(location, orphan!);
    expect(await provider.mismatches(location)).toEqual([]);
    // The runtime then writes the failed group one by one; the first is stored as if nothing happened.
    provider.writeSync(location, kept!);
    expect(await provider.mismatches(location)).toEqual([]);
  });

  it('checks every checkpoint of a group before storing any', async () => {
    const { provider, location } = setup();
    const run = growingRun({ tasks: 2 });
    const [good, bad] = nextWrites(run, 2);
    const badBranch = { ...bad!, metadata: { ...bad!.metadata, branch: '../escape' } };
    await expect(provider.writeBatch(location, [good!, badBranch])).rejects.toThrow(/branch/);
    expect(await provider.list(location)).toEqual([]);
  });
});
