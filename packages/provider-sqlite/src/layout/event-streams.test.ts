import { EventBus, TaskStartedEvent } from '@crewline/events';
import { GrowingCrew, growingRun, writeGrowingCheckpointsSync } from '@crewline/provider-testkit/fixtures';
import {
  createCheckpointWrite,
  encodeValue,
  newCheckpointId,
  RuntimeState,
  readDocument,
  validateDocument,
} from '@crewline/runtime-state';
import { describe, expect, it, onTestFinished } from 'vitest';
import { useRecordingDatabases } from '../test-support/recording-database.js';
import { RecordingProvider } from '../test-support/recording-provider.js';

const setup = useRecordingDatabases();

/** A new run restored from a stored checkpoint, as resume and fork do. */
async function restore(provider: RecordingProvider, location: string, id: string) {
  const document = await readDocument(provider, location, id);
  const crew = GrowingCrew.fromSnapshot(document.entities[0]!);
  const state = RuntimeState.fromDocument(document, {
    provider,
    location,
    entities: [crew],
    bus: new EventBus(),
  });
  return growingRun({ crew, state });
}

describe('event streams', () => {
  it('a linear run keeps every event once, in one stream', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 5 });
    writeGrowingCheckpointsSync(run, 25);
    const stats = (await provider.stats(location))!;
    expect(stats.streams).toBe(1);
    expect(stats.events).toBe(25);
    expect(await provider.mismatches(location)).toEqual([]);
  });

  it('resuming from an older checkpoint starts a new stream; both lines read back exactly', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 6 });
    const main = writeGrowingCheckpointsSync(run, 12);
    const resumed = await restore(provider, location, main[4]!);
    const side = writeGrowingCheckpointsSync(resumed, 7);
    const stats = (await provider.stats(location))!;
    expect(stats.streams).toBe(2);
    // The resumed line shares the first 5 events and stores only its 7 new ones.
    expect(stats.events).toBe(12 + 7);
    expect(await provider.mismatches(location, [...main, ...side])).toEqual([]);
    const first = validateDocument(JSON.parse(provider.written.get(side[0]!)!));
    expect(first.metadata.parentId).toBe(main[4]);
    expect(first.events.slice(0, 5)).toEqual(
      validateDocument(JSON.parse(provider.written.get(main[4]!)!)).events,
    );
  });

  it('a fork continues the stream of a newest checkpoint; the original line resumed later branches off', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 6 });
    const main = writeGrowingCheckpointsSync(run, 6);
    const forked = await restore(provider, location, main[5]!);
    forked.state.fork('experiment/a');
    const fork = writeGrowingCheckpointsSync(forked, 4);
    expect((await provider.stats(location))!.streams).toBe(1);
    const again = await restore(provider, location, main[5]!);
    const more = writeGrowingCheckpointsSync(again, 3);
    const stats = (await provider.stats(location))!;
    expect(stats.streams).toBe(2);
    expect(stats.events).toBe(6 + 4 + 3);
    expect(await provider.mismatches(location, [...main, ...fork, ...more])).toEqual([]);
    expect((await provider.list(location, { branch: 'experiment/a' })).map((entry) => entry.id)).toEqual(
      fork,
    );
  });

  it('a checkpoint sharing fewer events than its parent holds forks the stream at that point', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 4 });
    const [, , parent] = writeGrowingCheckpointsSync(run, 3);
    const document = await readDocument(provider, location, parent!);
    // Two events kept, then a different third and fourth (an edited history).
    const events = [
      ...document.events.slice(0, 2),
      ...[0, 1].map((index) => {
        const event = new TaskStartedEvent({ description: `rewritten ${index}` });
        event.sequence = 3 + index;
        return event.toJSON();
      }),
    ];
    const write = createCheckpointWrite({
      metadata: { ...document.metadata, id: newCheckpointId(), parentId: parent!, eventCount: events.length },
      inputs: document.inputs,
      entities: document.entities,
      events,
      parentEventCount: 2,
    });
    provider.writeSync(location, write);
    expect((await provider.stats(location))!.streams).toBe(2);
    expect(await provider.mismatches(location)).toEqual([]);
  });

  it('a parent this database does not hold means a new stream with every event', async () => {
    const { provider, location } = setup();
    const run = growingRun({ tasks: 3 });
    for (let index = 0; index < 4; index += 1) run.step();
    const { metadata, entities } = run.state.snapshot('manual');
    const write = createCheckpointWrite({
      metadata: { ...metadata, parentId: '20200101T000000000-abcdef01' },
      inputs: encodeValue(run.state.inputs),
      entities,
      events: run.state.events.slice(),
      parentEventCount: 4,
    });
    provider.writeSync(location, write);
    const stats = (await provider.stats(location))!;
    expect(stats.events).toBe(4);
    expect(await provider.mismatches(location)).toEqual([]);
  });

  it('a second provider instance resuming the run stores only what changed (head rebuilt from the database)', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 30, outputBytes: 1500 });
    const ids = writeGrowingCheckpointsSync(run, 40);
    provider.close();
    const second = new RecordingProvider();
    onTestFinished(() => second.close());
    const before = (await second.stats(location))!;
    const resumed = await restore(second, location, ids.at(-1)!);
    resumed.state.provider = second;
    const next = writeGrowingCheckpointsSync(resumed, 1);
    const after = (await second.stats(location))!;
    expect(after.streams).toBe(1);
    expect(after.chunks - before.chunks).toBeLessThanOrEqual(4);
    expect(await second.mismatches(location, next)).toEqual([]);
    expect(await provider.mismatches(location, ids)).toEqual([]);
  });
});
