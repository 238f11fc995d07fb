import { CrewlineError } from '@crewline/events';
import { growingRun, nextWrites } from '@crewline/provider-testkit/fixtures';
import { describe, expect, it } from 'vitest';
import { useRecordingDatabases } from './test-support/recording-database.js';

const setup = useRecordingDatabases();

describe('group commit (SqliteProvider.writeBatch)', () => {
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
});
