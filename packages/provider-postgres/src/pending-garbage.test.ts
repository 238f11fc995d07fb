// A prune killed after its commit but before its garbage collection leaves the removed checkpoints'
// chunks and events behind, counted in `pending_garbage`. The next prune usually finds nothing more
// to remove (the same retention): it still collects what is pending once that is due, or the garbage
// stays until something else is removed.
import { growingRun, nextWrites } from '@crewline/provider-testkit/fixtures';
import { expect, it } from 'vitest';
import { parseLocation } from './location.js';
import { PostgresProvider } from './postgres-provider.js';
import { describeWithPostgres, useTemporaryLocations, withServer } from './test-support/test-server.js';

const temporary = useTemporaryLocations();

function schemaOf(location: string): string {
  return `"${parseLocation(location, 'crewline').schema}"`;
}

/** Removes `ids` as a prune does, and counts them as pending garbage, without collecting it. */
async function pruneCommittedThenKilled(location: string, ids: readonly string[]): Promise<void> {
  const s = schemaOf(location);
  await withServer(async (client) => {
    await client.query(`DELETE FROM ${s}.checkpoints WHERE id = ANY($1::text[])`, [ids]);
    await client.query(
      `UPDATE ${s}.crewline_meta SET value = (value::bigint + $1)::text WHERE key = 'pending_garbage'`,
      [ids.length],
    );
  });
}

async function pendingGarbage(location: string): Promise<number> {
  return withServer(async (client) => {
    const { rows } = await client.query<{ value: string }>(
      `SELECT value FROM ${schemaOf(location)}.crewline_meta WHERE key = 'pending_garbage'`,
    );
    return Number(rows[0]!.value);
  });
}

describeWithPostgres('a prune with nothing to remove', () => {
  it('collects the garbage a killed prune left pending, once due; a dry run does not', async () => {
    const provider = temporary.track(new PostgresProvider({ poolSize: 2 }));
    const location = provider.resolveLocation(temporary.location());
    const writes = nextWrites(growingRun({ tasks: 6, outputBytes: 400 }), 8);
    for (const write of writes) await provider.write(location, write);
    // The first and the newest stay: a prune keeping 2 has nothing to remove.
    await pruneCommittedThenKilled(
      location,
      writes.slice(1, -1).map((write) => write.metadata.id),
    );
    const left = (await provider.stats(location))!;
    expect(left.checkpoints).toBe(2);

    expect(await provider.prune(location, { keep: 2, dryRun: true })).toEqual({ removed: [], dryRun: true });
    expect((await provider.stats(location))!.chunks).toBe(left.chunks);

    expect(await provider.prune(location, { keep: 2 })).toEqual({ removed: [], dryRun: false });

    const after = (await provider.stats(location))!;
    expect(after.chunks).toBeLessThan(left.chunks);
    expect(await pendingGarbage(location)).toBe(0);
    // What a collection on demand finds left: nothing.
    expect(await provider.collectGarbage(location)).toEqual({ streams: 0, events: 0, chunks: 0 });
  });
});
