import { EventBus } from '@crewline/events';
import { GrowingCrew, growingRun, writeGrowingCheckpointsSync } from '@crewline/provider-testkit/fixtures';
import { RuntimeState, readDocument } from '@crewline/runtime-state';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { useRecordingDatabases } from '../test-support/recording-database.js';
import type { RecordingProvider } from '../test-support/recording-provider.js';

const setup = useRecordingDatabases();

async function branchFrom(provider: RecordingProvider, location: string, id: string, branch?: string) {
  const document = await readDocument(provider, location, id);
  const crew = GrowingCrew.fromSnapshot(document.entities[0]!);
  const state = RuntimeState.fromDocument(document, {
    provider,
    location,
    entities: [crew],
    bus: new EventBus(),
  });
  if (branch !== undefined) state.fork(branch);
  return growingRun({ crew, state });
}

/** A main line of 20, a fork of 8 from its 10th checkpoint and a resume of 6 from its 5th. */
async function tree() {
  const { provider, location } = setup();
  const run = growingRun({ provider, location, tasks: 12, outputBytes: 800 });
  const main = writeGrowingCheckpointsSync(run, 20);
  const fork = writeGrowingCheckpointsSync(await branchFrom(provider, location, main[9]!, 'fork/a'), 8);
  const resumed = writeGrowingCheckpointsSync(await branchFrom(provider, location, main[4]!), 6);
  return { provider, location, main, fork, resumed };
}

describe('prune and garbage collection', () => {
  it('keeps every remaining checkpoint readable byte for byte, including lines whose ancestors were pruned', async () => {
    const { provider, location, main, fork, resumed } = await tree();
    expect((await provider.stats(location))!.streams).toBe(3);
    const result = await provider.prune(location, { keep: 2 });
    const kept = (await provider.list(location)).map((entry) => entry.id);
    // Per run: main and the resumed line are one run (the resume kept its lineage), whose newest two
    // are the resumed line's last two; main's last stays too (a head that run did not continue), and
    // so does main's 10th (the fork point). The fork is a run of its own and keeps its newest two,
    // and its first, which names the fork point.
    expect(kept.sort()).toEqual(
      [main[9]!, main[19]!, ...resumed.slice(-2), fork[0]!, ...fork.slice(-2)].sort(),
    );
    expect(result.removed).toHaveLength(20 + 8 + 6 - 7);
    await provider.collectGarbage(location);
    expect(await provider.mismatches(location, kept)).toEqual([]);
    // The main stream's last checkpoint still needs all its events, the fork and the resumed line
    // theirs: no event is freed, but the old versions of the entities are.
    const stats = (await provider.stats(location))!;
    expect(stats.streams).toBe(3);
    expect(stats.events).toBe(20 + 8 + 6);
  });

  it('frees the events and chunks only the removed checkpoints used', async () => {
    const { provider, location, main, fork } = await tree();
    const before = (await provider.stats(location))!;
    for (const id of fork) expect(await provider.delete(location, id)).toBe(true);
    await provider.collectGarbage(location);
    const after = (await provider.stats(location))!;
    expect(after.events).toBe(before.events - 8);
    expect(after.chunks).toBeLessThan(before.chunks);
    expect(await provider.mismatches(location, main)).toEqual([]);
  });

  it('deleting a checkpoint in the middle of a line keeps its descendants whole', async () => {
    const { provider, location, main } = await tree();
    for (const id of main.slice(0, 15)) await provider.delete(location, id);
    await provider.collectGarbage(location);
    expect(await provider.mismatches(location, main.slice(15))).toEqual([]);
  });

  it('removing everything leaves no events, streams or chunks', async () => {
    const { provider, location } = await tree();
    for (const checkpoint of await provider.list(location)) await provider.delete(location, checkpoint.id);
    const report = await provider.collectGarbage(location);
    const stats = (await provider.stats(location))!;
    expect({ events: stats.events, streams: stats.streams, chunks: stats.chunks }).toEqual({
      events: 0,
      streams: 0,
      chunks: 0,
    });
    expect(report.events + report.chunks).toBeGreaterThanOrEqual(0);
  });

  it('collects on its own once the removals add up to a quarter of what remains', async () => {
    const { provider, location } = await tree();
    const before = (await provider.stats(location))!;
    // 26 checkpoints of one run on main (20 + 6 resumed); keeping 10 removes 15 (the 10th of main is
    // the fork's origin and stays), well over a quarter of the 19 left.
    await provider.prune(location, { keep: 10, branch: 'main' });
    const after = (await provider.stats(location))!;
    expect(after.checkpoints).toBe(before.checkpoints - 15);
    // Old versions of the entities are freed; events are not: the newest main checkpoint holds them all.
    expect(after.chunks).toBeLessThan(before.chunks);
    expect(after.events).toBe(before.events);
    expect(
      await provider.mismatches(
        location,
        (await provider.list(location)).map((entry) => entry.id),
      ),
    ).toEqual([]);
  });

  it('keeps the segments of long arrays that remaining checkpoints use, and frees the others', async () => {
    const { provider, location } = setup();
    // 200 tasks: the crew's list of task ids passes 512 bytes and is stored in segments (schema version 5).
    const run = growingRun({ provider, location, tasks: 200, outputBytes: 300 });
    const written = writeGrowingCheckpointsSync(run, 40);
    expect(await provider.mismatches(location, written)).toEqual([]);
    const db = new Database(location, { readonly: true });
    const segmented = db.prepare("SELECT count(*) FROM chunks WHERE body LIKE 's[%'").pluck().get();
    db.close();
    expect(segmented).toBeGreaterThan(0);
    const before = (await provider.stats(location))!;
    await provider.prune(location, { keep: 3 });
    await provider.collectGarbage(location);
    expect((await provider.stats(location))!.chunks).toBeLessThan(before.chunks);
    expect(await provider.mismatches(location, written.slice(-3))).toEqual([]);
    const later = writeGrowingCheckpointsSync(run, 5);
    expect(await provider.mismatches(location, [...written.slice(-3), ...later])).toEqual([]);
  });

  it('keeps long entity summaries in shared chunks: listed, read and collected like the rest', async () => {
    const { provider, location } = setup();
    // Eight crews in one run: their summaries pass ENTITIES_CHUNK_BYTES.
    const crews = Array.from({ length: 8 }, (_, index) => new GrowingCrew(3, `growing-crew-number-${index}`));
    const state = new RuntimeState({ provider, location, entities: crews, bus: new EventBus() });
    const run = growingRun({ crew: crews[0]!, state });
    const written = writeGrowingCheckpointsSync(run, 30);
    const listed = await provider.list(location);
    expect(listed.map((entry) => entry.entities)).toEqual(written.map(() => expect.any(Array)));
    expect(listed.at(-1)!.entities).toHaveLength(8);
    expect(listed.at(-1)!.entities).toEqual(crews.map((crew) => crew.summarizeEntity()));
    expect(await provider.mismatches(location, written)).toEqual([]);
    const db = new Database(location, { readonly: true });
    const stored = db.prepare("SELECT count(*) FROM chunks WHERE body LIKE 'e%'").pluck().get() as number;
    const inRows = db.prepare("SELECT count(*) FROM checkpoints WHERE entities LIKE '[%'").pluck().get();
    db.close();
    // Consecutive checkpoints with the same summaries share one chunk.
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(written.length);
    expect(inRows).toBe(0);
    await provider.prune(location, { keep: 2 });
    await provider.collectGarbage(location);
    expect(await provider.mismatches(location, written.slice(-2))).toEqual([]);
    expect((await provider.latest(location))!.entities).toEqual(crews.map((crew) => crew.summarizeEntity()));
    const later = writeGrowingCheckpointsSync(run, 3);
    expect(await provider.mismatches(location, [...written.slice(-2), ...later])).toEqual([]);
  });

  it('stores a value met again at another place once, and still reads every checkpoint exactly after a collection', async () => {
    const { provider, location } = setup();
    const answer = `the answer, long enough to be a chunk of its own: ${'x'.repeat(400)}`;
    const data: Record<string, unknown> = { conversation: [answer], output: null };
    const entity = {
      entityKind: 'crew' as const,
      entityId: 'one-crew',
      entityName: 'one crew',
      snapshotEntity: () => ({
        kind: 'crew' as const,
        id: 'one-crew',
        name: 'one crew',
        data: { ...data } as never,
      }),
      summarizeEntity: () => ({ kind: 'crew' as const, id: 'one-crew', name: 'one crew' }),
    };
    const state = new RuntimeState({ provider, location, entities: [entity], bus: new EventBus() });
    const first = state.writeCheckpointSync({ trigger: 'llm_call_completed' });
    data.conversation = null;
    data.output = answer;
    const second = state.writeCheckpointSync({ trigger: 'task_completed' });
    const count = () => {
      const db = new Database(location, { readonly: true });
      const values = db.prepare("SELECT count(*) FROM chunks WHERE body LIKE 'v%'").pluck().get();
      db.close();
      return values;
    };
    expect(count()).toBe(1);
    expect(await provider.mismatches(location, [first.id, second.id])).toEqual([]);
    await provider.delete(location, first.id);
    await provider.collectGarbage(location);
    data.notes = answer;
    const third = state.writeCheckpointSync({ trigger: 'manual' });
    expect(await provider.mismatches(location, [second.id, third.id])).toEqual([]);
  });

  it('a run that keeps writing after its older checkpoints were pruned still stores and reads exactly', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 10 });
    writeGrowingCheckpointsSync(run, 10);
    await provider.prune(location, { keep: 1 });
    await provider.collectGarbage(location);
    const later = writeGrowingCheckpointsSync(run, 10);
    expect(await provider.mismatches(location, later)).toEqual([]);
  });

  it('with maxCheckpoints the database stays bounded while the run goes on', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 30, outputBytes: 500 });
    for (let index = 0; index < 60; index += 1)
      run.state.writeCheckpointSync({ trigger: run.step(), maxCheckpoints: 3 });
    await run.state.settle();
    const listed = await provider.list(location);
    expect(listed).toHaveLength(3);
    expect(
      await provider.mismatches(
        location,
        listed.map((entry) => entry.id),
      ),
    ).toEqual([]);
    const stats = (await provider.stats(location))!;
    expect(stats.streams).toBe(1);
  });
});
