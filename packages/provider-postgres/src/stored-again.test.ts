// A fork stores its origin again right before and right after its first checkpoint (runtime-state's
// companion writes): where the origin is still stored, both are writes of a checkpoint already
// stored. Accepted as stored, they used to be found so by the server's unique key: each one an
// aborted statement and a `duplicate key value violates unique constraint` ERROR in the server's
// log, two on every fork.
import { CrewlineError, EventBus } from '@crewline/events';
import {
  buildCheckpointWrite,
  GrowingCrew,
  growingRun,
  writeGrowingCheckpoints,
} from '@crewline/provider-testkit/fixtures';
import { RuntimeState, readDocument } from '@crewline/runtime-state';
import { afterEach, expect, it } from 'vitest';
import { RecordingProvider } from './test-support/recording-provider.js';
import { recordServerErrors } from './test-support/server-errors.js';
import { describeWithPostgres, useTemporaryLocations } from './test-support/test-server.js';

const temporary = useTemporaryLocations();

let recording: ReturnType<typeof recordServerErrors> | undefined;
afterEach(() => {
  recording?.restore();
  recording = undefined;
});

function setup(): { provider: RecordingProvider; location: string } {
  const provider = temporary.track(new RecordingProvider());
  return { provider, location: provider.resolveLocation(temporary.location()) };
}

/** Records the server's errors from now on (see {@link recordServerErrors}). */
function serverErrors(): ReturnType<typeof recordServerErrors>['errors'] {
  recording = recordServerErrors();
  return recording.errors;
}

describeWithPostgres('a checkpoint stored again', () => {
  it('is answered as the stored one, without an error on the server', async () => {
    const { provider, location } = setup();
    const checkpoint = buildCheckpointWrite();
    const stored = await provider.write(location, checkpoint);
    const errors = serverErrors();
    expect(await provider.write(location, checkpoint)).toEqual(stored);
    // Another process (no head in memory) stores it again too.
    const other = temporary.track(new RecordingProvider());
    expect(await other.write(location, checkpoint)).toEqual(stored);
    expect(errors).toEqual([]);
    expect((await provider.list(location)).map((entry) => entry.id)).toEqual([stored.id]);
    expect(await provider.mismatches(location)).toEqual([]);
  });

  it('a fork stores its origin again twice, without an error on the server', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 6, outputBytes: 400 });
    const ids = await writeGrowingCheckpoints(run, 6);
    const origin = ids[2]!;
    // The fork in another process, as `crewline checkpoint fork` would be.
    const forker = temporary.track(new RecordingProvider());
    const document = await readDocument(forker, location, origin);
    const crew = GrowingCrew.fromSnapshot(document.entities[0]!);
    const state = RuntimeState.fromDocument(document, {
      provider: forker,
      location,
      entities: [crew],
      bus: new EventBus(),
    });
    state.fork('fork/experiment');
    const errors = serverErrors();
    const forked = await writeGrowingCheckpoints(growingRun({ crew, state }), 3);
    await state.settle();
    expect(errors).toEqual([]);
    const listed = await provider.list(location);
    expect(listed.find((entry) => entry.id === forked[0])!.parentId).toBe(origin);
    expect(listed.filter((entry) => entry.id === origin)).toHaveLength(1);
    expect(await forker.mismatches(location)).toEqual([]);
  });

  it('is still refused as a conflict when another checkpoint holds its id, and changes nothing', async () => {
    const { provider, location } = setup();
    const stored = await provider.write(location, buildCheckpointWrite());
    const other = buildCheckpointWrite({ metadata: { id: stored.id } });
    const errors = serverErrors();
    const failure = await provider.write(location, other).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'conflict'), String(failure)).toBe(true);
    expect((failure as Error).message).toContain(stored.id);
    expect(errors).toEqual([]);
    expect(await provider.list(location)).toEqual([stored]);
    expect(await provider.mismatches(location, [stored.id])).toEqual([]);
  });
});
