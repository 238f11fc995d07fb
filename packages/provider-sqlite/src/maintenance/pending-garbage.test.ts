// A prune killed after its commit but before its garbage collection leaves the removed checkpoints'
// chunks and events behind, counted in `pending_garbage`. The next prune usually finds nothing more
// to remove (the same retention): it still collects what is pending once that is due.
import { growingRun, writeGrowingCheckpointsSync } from '@crewline/provider-testkit/fixtures';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { useRecordingDatabases } from '../test-support/recording-database.js';

const setup = useRecordingDatabases();

describe('a prune with nothing to remove', () => {
  it('collects the garbage a killed prune left pending, once due; a dry run does not', async () => {
    const { provider, location } = setup();
    const written = writeGrowingCheckpointsSync(
      growingRun({ provider, location, tasks: 6, outputBytes: 400 }),
      8,
    );
    provider.close();
    // Removed and counted as a prune's transaction does, then killed before collecting.
    const database = new Database(location);
    const removed = written.slice(1, -1);
    const remove = database.prepare('DELETE FROM checkpoints WHERE id = ?');
    for (const id of removed) remove.run(id);
    database
      .prepare("UPDATE crewline_meta SET value = ? WHERE key = 'pending_garbage'")
      .run(String(removed.length));
    database.close();
    const left = (await provider.stats(location))!;
    expect(left.checkpoints).toBe(2);

    expect(await provider.prune(location, { keep: 2, dryRun: true })).toEqual({ removed: [], dryRun: true });
    expect((await provider.stats(location))!.chunks).toBe(left.chunks);

    expect(await provider.prune(location, { keep: 2 })).toEqual({ removed: [], dryRun: false });

    expect((await provider.stats(location))!.chunks).toBeLessThan(left.chunks);
    expect(await provider.collectGarbage(location)).toEqual({ streams: 0, events: 0, chunks: 0 });
    expect(await provider.mismatches(location, [written[0]!, written.at(-1)!])).toEqual([]);
  });
});
