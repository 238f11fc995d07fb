import { EventBus } from '@crewline/events';
import {
  costOfOneMoreCheckpoint,
  GrowingCrew,
  growingRun,
  listedSizeMismatches,
  writeGrowingCheckpoints,
} from '@crewline/provider-testkit/fixtures';
import { RuntimeState, readDocument } from '@crewline/runtime-state';
import { referencedChunks } from '@crewline/runtime-state/internal';
import { expect, it } from 'vitest';
import { RecordingProvider } from './test-support/recording-provider.js';
import { describeWithPostgres, useTemporaryLocations, withServer } from './test-support/test-server.js';

const temporary = useTemporaryLocations();

function setup(): { provider: RecordingProvider; location: string } {
  const provider = temporary.track(new RecordingProvider());
  return { provider, location: provider.resolveLocation(temporary.location()) };
}

/** Bytes of content stored (event lines and chunk bodies), straight from the tables. */
async function contentBytes(location: string): Promise<number> {
  const schema = new URL(location).searchParams.get('schema')!;
  return withServer(async (client) => {
    const { rows } = await client.query<{ bytes: string }>(
      `SELECT (SELECT coalesce(sum(octet_length(body)), 0) FROM "${schema}".events)
            + (SELECT coalesce(sum(octet_length(body)), 0) FROM "${schema}".chunks) AS bytes`,
    );
    return Number(rows[0]!.bytes);
  });
}

describeWithPostgres('incremental storage', () => {
  it('refs holds the ids each node names, as offsets from its own id', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 12, outputBytes: 900 });
    await writeGrowingCheckpoints(run, 40);
    const schema = new URL(location).searchParams.get('schema')!;
    const nodes = await withServer(async (client) => {
      const { rows } = await client.query<{ body: string; refs: string[] | null }>(
        `SELECT body, ARRAY(SELECT c.id - r.offset_by FROM unnest(string_to_array(c.refs, ',')::bigint[]) AS r(offset_by)) AS refs
           FROM "${schema}".chunks c WHERE left(body, 1) = 'n'`,
      );
      return rows;
    });
    expect(nodes.length).toBeGreaterThan(50);
    expect(nodes.some((node) => (node.refs ?? []).length > 5)).toBe(true);
    for (const node of nodes) {
      const expected = referencedChunks('test', node.body.slice(1)).sort((left, right) => left - right);
      const actual = (node.refs ?? []).map(Number).sort((left, right) => left - right);
      expect(actual, node.body).toEqual(expected);
    }
  });

  it('reads every checkpoint back byte for byte, with sizeBytes equal to its text', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 8, outputBytes: 700 });
    await writeGrowingCheckpoints(run, 30);
    expect(await provider.mismatches(location)).toEqual([]);
    expect(await listedSizeMismatches(provider, location, provider.written)).toEqual([]);
  });

  it('one more event costs about that event, not the history or the unchanged entities', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 40, outputBytes: 1000 });
    await writeGrowingCheckpoints(run, 90);
    // Step 91 starts a task: a small event and a status change.
    const { stored, addedBytes, eventBytes } = await costOfOneMoreCheckpoint(run, () =>
      contentBytes(location),
    );
    expect(stored.sizeBytes).toBeGreaterThan(100_000);
    expect(addedBytes).toBeLessThan(eventBytes + 1500);
  });

  it('stores a crew-like run within 3× its final checkpoint (content and whole tables)', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 40, outputBytes: 2000 });
    await writeGrowingCheckpoints(run, 120);
    const final = (await provider.latest(location))!.sizeBytes!;
    expect(await contentBytes(location)).toBeLessThan(2 * final);
    // Whole relations (rows, indexes, TOAST, free space): fixed page overhead dominates small runs.
    const stats = (await provider.stats(location))!;
    expect(stats.totalBytes).toBeLessThan(3 * final + 512 * 1024);
    expect(await provider.mismatches(location)).toEqual([]);
  });

  it('forks, resumes from older checkpoints and other processes read back exactly, and share what they can', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 10, outputBytes: 800 });
    const ids = await writeGrowingCheckpoints(run, 20);
    // Another provider (as another process would) resumes the run from an older checkpoint: its
    // head is rebuilt from the database and the events it shares are not stored again.
    const other = temporary.track(new RecordingProvider());
    for (const [index, from] of [ids[9]!, ids[14]!, ids.at(-1)!].entries()) {
      const document = await readDocument(other, location, from);
      const crew = GrowingCrew.fromSnapshot(document.entities[0]!);
      const state = RuntimeState.fromDocument(document, {
        entities: [crew],
        provider: other,
        location,
        bus: new EventBus(),
      });
      if (index === 1) state.fork(`fork-${index}`);
      const continued = growingRun({ crew, state });
      const before = await contentBytes(location);
      await writeGrowingCheckpoints(continued, 6);
      const added = (await contentBytes(location)) - before;
      // Six events and the changed parts: far less than six whole documents.
      expect(added).toBeLessThan((await other.latest(location))!.sizeBytes! * 1.5);
    }
    expect(await provider.mismatches(location)).toEqual([]);
    expect(await other.mismatches(location)).toEqual([]);
    expect(await provider.mismatches(location, provider.written.keys(), other)).toEqual([]);
  });

  it('after pruning and garbage collection, the remaining checkpoints read back exactly', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 12, outputBytes: 600 });
    const ids = await writeGrowingCheckpoints(run, 36);
    const before = await contentBytes(location);
    const { removed } = await provider.prune(location, { keep: 5 });
    expect(removed.length).toBe(31);
    await provider.collectGarbage(location);
    expect(await contentBytes(location)).toBeLessThan(before);
    const kept = ids.slice(-5);
    expect((await provider.list(location)).map((entry) => entry.id)).toEqual(kept);
    expect(await provider.mismatches(location, kept)).toEqual([]);
    // The run goes on from its head after the collection trimmed its streams.
    await writeGrowingCheckpoints(run, 4);
    expect(
      await provider.mismatches(
        location,
        (await provider.list(location)).map((entry) => entry.id),
      ),
    ).toEqual([]);
    const stats = (await provider.stats(location))!;
    expect(stats.checkpoints).toBe(9);
  });

  it('deleting a parent under a running run makes the next write store its head whole, still exact', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 6, outputBytes: 500 });
    const ids = await writeGrowingCheckpoints(run, 8);
    await provider.delete(location, ids.at(-1)!);
    await provider.collectGarbage(location);
    const next = await writeGrowingCheckpoints(run, 3);
    expect(await provider.mismatches(location, [...ids.slice(0, -1), ...next])).toEqual([]);
  });
});
