import { CrewlineError } from '@crewline/events';
import { growingRun, nextWrites } from '@crewline/provider-testkit/fixtures';
import { expect, it } from 'vitest';
import { RecordingProvider } from './test-support/recording-provider.js';
import { describeWithPostgres, useTemporaryLocations, withServer } from './test-support/test-server.js';

const temporary = useTemporaryLocations();

function setup(): { provider: RecordingProvider; location: string } {
  const provider = temporary.track(new RecordingProvider());
  return { provider, location: provider.resolveLocation(temporary.location()) };
}

/** How many transactions stored the rows of `ids` (rows one transaction inserted share its xmin). */
async function transactionsThatStored(location: string, ids: readonly string[]): Promise<number> {
  const schema = new URL(location).searchParams.get('schema')!;
  return withServer(async (client) => {
    const { rows } = await client.query<{ count: string }>(
      `SELECT count(DISTINCT xmin::text) AS count FROM "${schema}".checkpoints WHERE id = ANY($1::text[])`,
      [ids],
    );
    return Number(rows[0]!.count);
  });
}

describeWithPostgres('group commit (PostgresProvider.writeBatch)', () => {
  it('stores a group in one transaction, in order, each checkpoint continuing the one before it and read back byte for byte', async () => {
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
    expect(listed.map((checkpoint) => checkpoint.sizeBytes)).toEqual(
      stored.map((checkpoint) => checkpoint.sizeBytes),
    );
    expect(
      await transactionsThatStored(
        location,
        second.map((write) => write.metadata.id),
      ),
    ).toBe(1);
    // Read back by another provider (another process): nothing comes from this one's memory.
    const reader = temporary.track(new RecordingProvider());
    expect(await provider.mismatches(location, provider.written.keys(), reader)).toEqual([]);
    // Each continued the one before it: the second group stored its new events only.
    const stats = await provider.stats(location);
    expect(stats?.events).toBe(second.at(-1)!.metadata.eventCount);
  });

  it('stores nothing of a group that fails, and a later write does not continue what it rolled back', async () => {
    const { provider, location } = setup();
    const run = growingRun({ tasks: 6, outputBytes: 900 });
    const [root] = nextWrites(run, 1);
    await provider.writeBatch(location, [root!]);
    // Enough events to finish a task and start the next: the last checkpoint of the group shares
    // chunks the earlier ones added (an output finished before it).
    const group = nextWrites(run, 14, root);
    const [clashing] = nextWrites(run, 1, group.at(-1));
    // The last checkpoint of the group takes an id already stored: the whole group rolls back.
    const duplicate = { ...clashing!, metadata: { ...clashing!.metadata, id: root!.metadata.id } };
    const failure = await provider
      .writeBatch(location, [...group, duplicate])
      .catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'conflict')).toBe(true);
    expect((failure as Error).message).toContain(`checkpoint "${root!.metadata.id}" is already stored`);
    expect((failure as Error).message).toMatch(/rolled back/);
    expect((await provider.list(location)).map((checkpoint) => checkpoint.id)).toEqual([root!.metadata.id]);
    // Another process stores the rolled-back checkpoints (its own encoding, its own chunks). A child
    // written here must be encoded against what is stored, not against the heads this provider
    // encoded inside the rolled-back transaction, whose chunks are gone.
    const other = temporary.track(new RecordingProvider());
    for (const write of group) await other.write(location, write);
    const [child] = nextWrites(run, 1, group.at(-1));
    provider.written.clear();
    await provider.write(location, child!);
    expect(await provider.mismatches(location)).toEqual([]);
  });

  it('writes a group longer than one statement takes in one transaction, all or nothing', async () => {
    const { provider, location } = setup();
    const run = growingRun({ tasks: 20, outputBytes: 300 });
    const [root] = nextWrites(run, 1);
    await provider.writeBatch(location, [root!]);
    // 150 checkpoints: three statements; the last one's duplicate id rolls back the first two.
    const long = nextWrites(run, 150, root);
    const clashing = { ...long.at(-1)!, metadata: { ...long.at(-1)!.metadata, id: root!.metadata.id } };
    const failure = await provider
      .writeBatch(location, [...long.slice(0, -1), clashing])
      .catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'conflict')).toBe(true);
    expect(await provider.list(location)).toHaveLength(1);
    const stored = await provider.writeBatch(location, long);
    expect(stored.map((checkpoint) => checkpoint.id)).toEqual(long.map((write) => write.metadata.id));
    expect(
      await transactionsThatStored(
        location,
        stored.map((checkpoint) => checkpoint.id),
      ),
    ).toBe(1);
    expect(await provider.mismatches(location)).toEqual([]);
  });

  it('checks the lease of every checkpoint inside the transaction, and stores nothing when one is lost', async () => {
    const { provider, location } = setup();
    const run = growingRun({ tasks: 4 });
    const lineageId = run.state.lineage.lineageId;
    const owner = 'owner-a';
    await provider.claimLease(location, {
      lineageId,
      owner,
      holder: 'test',
      checkpointId: null,
      ttlMs: 60_000,
    });
    const held = nextWrites(run, 3, undefined, { lineageId, owner });
    await provider.writeBatch(location, held);
    // The first checkpoint of the next group is written under the lease, the second under another
    // owner's: its check fails inside the transaction, and the first is rolled back with it.
    const [mine] = nextWrites(run, 1, held.at(-1), { lineageId, owner });
    const [foreign] = nextWrites(run, 1, mine, { lineageId, owner: 'owner-b' });
    const failure = await provider.writeBatch(location, [mine!, foreign!]).catch((error: unknown) => error);
    expect(CrewlineError.hasCode(failure, 'conflict')).toBe(true);
    expect((failure as Error).message).toMatch(
      /is being continued by test, .*; the group .* \(2 checkpoints\) was not stored/,
    );
    expect((failure as Error).message).toContain(foreign!.metadata.id);
    expect((await provider.list(location)).map((checkpoint) => checkpoint.id)).toEqual(
      held.map((write) => write.metadata.id),
    );
  });
});
