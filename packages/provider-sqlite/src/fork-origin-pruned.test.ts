// A fork restored from checkpoint X is a fork point of X only from its first write on; meanwhile the
// original run's maxCheckpoints may remove X. The fork's first write stores X again (RuntimeState's
// ForkOrigin), so its first checkpoint names a parent the database holds, read back whole, and every
// later prune keeps it. Before, X was gone for good (SPEC §3: the tree is recoverable from storage).
import { EventBus } from '@crewline/events';
import { GrowingCrew, growingRun, writeGrowingCheckpointsSync } from '@crewline/provider-testkit/fixtures';
import { RuntimeState, readDocument } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { useRecordingDatabases } from './test-support/recording-database.js';

const setup = useRecordingDatabases();

describe("a fork's origin pruned before the fork's first write", () => {
  it('is stored again with that write, whole, and kept from then on', async () => {
    const { provider, location } = setup();
    const run = growingRun({ provider, location, tasks: 6 });
    const origin = writeGrowingCheckpointsSync(run, 6)[2]!;
    const document = await readDocument(provider, location, origin);
    const crew = GrowingCrew.fromSnapshot(document.entities[0]!);
    const state = RuntimeState.fromDocument(document, {
      provider,
      location,
      entities: [crew],
      bus: new EventBus(),
    });
    state.fork('fork/experiment');
    // The original run goes on with maxCheckpoints 2 before the fork writes.
    run.state.writeCheckpointSync({ trigger: run.step(), maxCheckpoints: 2 });
    await run.state.settle();
    expect((await provider.list(location)).map((entry) => entry.id)).not.toContain(origin);

    const [first] = writeGrowingCheckpointsSync(growingRun({ crew, state }), 1);
    const listed = await provider.list(location);
    expect(listed.find((entry) => entry.id === first)!.parentId).toBe(origin);
    expect(await readDocument(provider, location, origin)).toEqual(document);
    run.state.writeCheckpointSync({ trigger: run.step(), maxCheckpoints: 2 });
    await run.state.settle();
    const kept = (await provider.list(location)).map((entry) => entry.id);
    expect(kept).toContain(origin);
    // What is kept reads back byte for byte as written (the origin as its first write stored it).
    expect(await provider.mismatches(location, kept)).toEqual([]);
  });
});
