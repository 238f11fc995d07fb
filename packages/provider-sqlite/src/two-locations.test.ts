// A run whose checkpoints go to two databases (a crew's location and an agent's own setting) keeps
// a chain in each (RuntimeState's LineagePositions). Before, each checkpoint named the run's previous
// one, held by the other database: SQLite found no parent and stored every checkpoint whole, as a
// stream of its own, and maxCheckpoints removed nothing because no checkpoint was continued there.
import { growingRun } from '@crewline/provider-testkit/fixtures';
import { readDocument } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { SqliteProvider } from './sqlite-provider.js';
import { removeTemporaryDatabase, temporaryDatabase } from './test-support/temporary-database.js';

describe('a run writing to two databases', () => {
  it('stays incremental in each and keeps each to maxCheckpoints', async () => {
    const provider = new SqliteProvider();
    const raw = [temporaryDatabase(), temporaryDatabase()];
    const [crew, agent] = raw.map((location) => provider.resolveLocation(location)) as [string, string];
    try {
      const run = growingRun({ provider, location: crew, tasks: 10, outputBytes: 600 });
      for (let index = 0; index < 30; index += 1) {
        // The crew's events go to one database, the agent's model calls to the other.
        const location = index % 2 === 0 ? crew : agent;
        run.state.writeCheckpointSync({ trigger: run.step(), location, maxCheckpoints: 3 });
      }
      await run.state.settle();
      for (const location of [crew, agent]) {
        const stats = (await provider.stats(location))!;
        // One chain per database: the events of each checkpoint continue its parent's stream.
        expect(stats.streams, `streams in ${location}`).toBe(1);
        const kept = await provider.list(location);
        expect(kept.length, `checkpoints kept in ${location}`).toBe(3);
        for (const checkpoint of kept) {
          const document = await readDocument(provider, location, checkpoint.id);
          expect(document.events.length).toBe(checkpoint.eventCount);
        }
      }
    } finally {
      provider.close();
      for (const location of raw) removeTemporaryDatabase(location);
    }
  });
});
