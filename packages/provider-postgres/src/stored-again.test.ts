// A fork stores its origin again right before and right after its first checkpoint (runtime-state's
// companion writes, flagged `mayBeStoredAlready`): where the origin is still stored, both are writes
// of a checkpoint already stored. Found so by the server's unique key, each was an aborted statement
// and a `duplicate key value violates unique constraint` ERROR in the server's log, two on every
// fork. A flagged write looks its id up first; other writes cost what they cost before.
import { CrewlineError, EventBus } from '@crewline/events';
import {
  buildCheckpointWrite,
  GrowingCrew,
  growingRun,
  writeGrowingCheckpoints,
} from '@crewline/provider-testkit/fixtures';
import { type CheckpointWrite, RuntimeState, readDocument } from '@crewline/runtime-state';
import { afterEach, expect, it } from 'vitest';
import { RecordingProvider } from './test-support/recording-provider.js';
import {
  recordServerErrors,
  type SentStatement,
  type ServerRecording,
} from './test-support/server-errors.js';
import { describeWithPostgres, useTemporaryLocations } from './test-support/test-server.js';

const temporary = useTemporaryLocations();

let recording: ServerRecording | undefined;
afterEach(() => {
  recording?.restore();
  recording = undefined;
});

function setup(): { provider: RecordingProvider; location: string } {
  const provider = temporary.track(new RecordingProvider());
  return { provider, location: provider.resolveLocation(temporary.location()) };
}

/** Records the statements sent and the server's errors from now on (see {@link recordServerErrors}). */
function recordServer(before?: (statement: SentStatement) => Promise<void> | undefined): ServerRecording {
  recording = recordServerErrors(before);
  return recording;
}

/** `write` as the runtime hands over a fork's origin stored again. */
function flagged(write: CheckpointWrite): CheckpointWrite {
  return { ...write, mayBeStoredAlready: true };
}

/** The statements that name `id` alone: a look-up of it (a write sends all its columns). */
function lookUpsOf(statements: readonly SentStatement[], id: string): SentStatement[] {
  return statements.filter((statement) => statement.values.length === 1 && statement.values[0] === id);
}

describeWithPostgres('a checkpoint that may be stored already', () => {
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
    const { errors } = recordServer();
    const forked = await writeGrowingCheckpoints(growingRun({ crew, state }), 3);
    await state.settle();
    expect(errors).toEqual([]);
    const listed = await provider.list(location);
    expect(listed.find((entry) => entry.id === forked[0])!.parentId).toBe(origin);
    expect(listed.filter((entry) => entry.id === origin)).toHaveLength(1);
    expect(await forker.mismatches(location)).toEqual([]);
    expect(await provider.mismatches(location, [origin])).toEqual([]);
  });

  it('is answered as the stored one, without an error on the server, from another process too', async () => {
    const { provider, location } = setup();
    const checkpoint = buildCheckpointWrite();
    const stored = await provider.write(location, checkpoint);
    const { errors } = recordServer();
    expect(await provider.write(location, flagged(checkpoint))).toEqual(stored);
    const other = temporary.track(new RecordingProvider());
    expect(await other.write(location, flagged(checkpoint))).toEqual(stored);
    expect(errors).toEqual([]);
    expect((await provider.list(location)).map((entry) => entry.id)).toEqual([stored.id]);
    expect(await provider.mismatches(location)).toEqual([]);
  });

  it('is still refused as a conflict when another checkpoint holds its id, and changes nothing', async () => {
    const { provider, location } = setup();
    const stored = await provider.write(location, buildCheckpointWrite());
    const other = flagged(buildCheckpointWrite({ metadata: { id: stored.id } }));
    const { errors } = recordServer();
    const failure = await provider.write(location, other).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'conflict'), String(failure)).toBe(true);
    expect((failure as CrewlineError).details).toMatchObject({ duplicateId: stored.id });
    expect((failure as Error).message).toContain(stored.id);
    expect(errors).toEqual([]);
    expect(await provider.list(location)).toEqual([stored]);
    expect(await provider.mismatches(location, [stored.id])).toEqual([]);
  });

  it('is stored where it is not stored yet (a fork writing to another location)', async () => {
    const { provider, location } = setup();
    const checkpoint = flagged(buildCheckpointWrite());
    const { errors, statements } = recordServer();
    const stored = await provider.write(location, checkpoint);
    expect(errors).toEqual([]);
    expect(lookUpsOf(statements, stored.id)).toHaveLength(1);
    expect(await provider.list(location)).toEqual([stored]);
    expect(await provider.mismatches(location)).toEqual([]);
  });

  it('stored by another process between its look-up and its write, is accepted as the same one', async () => {
    const { provider, location } = setup();
    const other = temporary.track(new RecordingProvider());
    await other.write(location, buildCheckpointWrite());
    const checkpoint = buildCheckpointWrite();
    const id = checkpoint.metadata.id;
    let raced: Promise<unknown> | undefined;
    const { errors, statements } = recordServer((statement) => {
      // The write itself (every column), once the look-up found nothing: the other process first.
      if (raced !== undefined || statement.values.length < 2 || statement.values[0] !== id) return undefined;
      raced = other.write(location, checkpoint);
      return raced.then(() => undefined);
    });
    const stored = await provider.write(location, flagged(checkpoint));
    expect(stored).toEqual(await raced);
    expect(lookUpsOf(statements, id).length).toBeGreaterThan(0);
    // The key decides, as for any write of one id at the same moment.
    expect(errors.map((error) => error.code)).toEqual(['23505']);
    expect((await provider.list(location)).filter((entry) => entry.id === id)).toHaveLength(1);
    expect(await other.mismatches(location, [id])).toEqual([]);
  });
});

describeWithPostgres('a write not flagged', () => {
  it('sends no look-up: a new checkpoint is one call, a stored one meets the key as before', async () => {
    const { provider, location } = setup();
    const checkpoint = buildCheckpointWrite();
    const { errors, statements } = recordServer();
    const stored = await provider.write(location, checkpoint);
    expect(lookUpsOf(statements, stored.id)).toEqual([]);
    expect(errors).toEqual([]);

    statements.length = 0;
    expect(await provider.write(location, checkpoint)).toEqual(stored);
    // The write first, then (refused on the key) the look-up that finds it the same checkpoint.
    const naming = statements.filter((statement) => statement.values[0] === stored.id);
    expect(naming.map((statement) => statement.values.length > 1)).toEqual([true, false]);
    expect(errors.map((error) => error.code)).toEqual(['23505']);

    const failure = await provider
      .write(location, buildCheckpointWrite({ metadata: { id: stored.id } }))
      .catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'conflict'), String(failure)).toBe(true);
    expect(await provider.list(location)).toEqual([stored]);
  });
});
