import { describeWithPostgres } from '@crewline/test-support/postgres';
import { afterEach, expect, it } from 'vitest';
import type { ChildResult } from './children/fencing-child.js';
import { resultOf, startChild } from './support/children.js';
import { type TrialStore, trialStore } from './support/trial.js';

/**
 * `pnpm --filter @crewline/fencing-e2e bench:writers` (CREWLINE_FENCING_FULL=1) runs the full size of
 * the quality bar, 4 × 2,500; `pnpm check` runs 4 × 250.
 */
const full = Boolean(process.env.CREWLINE_FENCING_FULL);
const writers = 4;
const checkpointsPerWriter = full ? 2500 : 250;
/** A one-agent task checkpointed on every event writes 6 checkpoints; the crew's start and end add 2. */
const tasksPerWriter = Math.ceil((checkpointsPerWriter - 2) / 6);

const stores: TrialStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.dispose();
});

describeWithPostgres('many processes write checkpoints into one Postgres, each holding its lease', () => {
  it(`${writers} processes × ${checkpointsPerWriter} checkpoints: none lost, every chain unbroken, no error surfaced`, {
    timeout: full ? 1_800_000 : 60_000,
  }, async () => {
    const store = trialStore('postgres');
    stores.push(store);
    const started = Date.now();
    // Every write carries its run's lease token and is checked in its transaction; with a 2 s lease
    // each run also renews every 667 ms while the others write.
    const children = Array.from({ length: writers }, () =>
      startChild(
        [
          'write',
          JSON.stringify({
            location: store.location,
            tasks: tasksPerWriter,
            callLog: store.callLog,
            leaseTtlMs: 2000,
          }),
        ],
        store.environment,
      ),
    );
    const exits = await Promise.all(children.map((child) => child.exit));
    const elapsed = Date.now() - started;
    for (const exit of exits) {
      expect(exit.stderr).toBe('');
      expect(exit.code).toBe(0);
    }
    const results = children.map((child) => resultOf<ChildResult & { status: 'finished' }>(child));
    for (const result of results) {
      expect(result.failed).toEqual([]);
      expect(result.written.length).toBeGreaterThanOrEqual(checkpointsPerWriter);
    }

    const listed = await store.provider.list(store.location);
    expect(listed).toHaveLength(results.reduce((total, result) => total + result.written.length, 0));
    const byLineage = new Map<string, typeof listed>();
    for (const checkpoint of listed)
      byLineage.set(checkpoint.lineageId, [...(byLineage.get(checkpoint.lineageId) ?? []), checkpoint]);
    expect(byLineage.size).toBe(writers);
    for (const result of results) {
      const run = byLineage.get(listed.find((checkpoint) => checkpoint.id === result.written[0])!.lineageId)!;
      expect(run.map((checkpoint) => checkpoint.id)).toEqual(result.written);
      expect(run.map((checkpoint) => checkpoint.parentId)).toEqual([null, ...result.written.slice(0, -1)]);
    }
    if (full) {
      // The backlog: automatic checkpoints are written in the background, in order, one run's at a time.
      const slowest = Math.max(...results.map((result) => result.slowestWriteMs));
      process.stderr.write(
        `[fencing-e2e] ${writers} × ${checkpointsPerWriter} checkpoints into one Postgres in ${elapsed} ms; slowest write ${slowest} ms after its event\n`,
      );
    }
  });
});
