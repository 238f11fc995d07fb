// A crew forked from checkpoint X is a fork point of X only once the fork writes. Pruning the
// original run in between (`crewline checkpoint prune`, or the run's own maxCheckpoints) removed X,
// and the fork's first checkpoint named a parent that was gone. The fork's first write now stores X
// again (runtime-state's ForkOrigin), here through JSON's background writes.
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { readDocument } from '@crewline/runtime-state';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';

let directory: { path: string; cleanup: () => void };
beforeEach(() => {
  directory = temporaryDirectory('crewline-fork-origin-');
});
afterEach(() => directory.cleanup());

describe("a crew fork whose origin was pruned before the fork's first write", () => {
  it('stores the origin again with that write; the fork names it and it reads back as before', async () => {
    const location = join(directory.path, 'checkpoints');
    const provider = new JsonProvider();
    const agent = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Clear', llm: offlineModel() });
    const crew = new Crew({
      agents: [agent],
      tasks: [1, 2, 3, 4].map(
        (index) => new Task({ description: `part ${index}`, expectedOutput: 'text', agent }),
      ),
      checkpoint: { location, provider },
    });
    await crew.kickoff({ bus: new EventBus() });
    const original = await provider.list(location);
    expect(original).toHaveLength(4);
    const origin = original[1]!;
    const before = await readDocument(provider, location, origin.id);

    const fork = await Crew.fork({ restoreFrom: origin.reference }, { branch: 'what-if' });
    const pruned = await provider.prune(location, { keep: 1, lineageId: origin.lineageId });
    expect(pruned.removed.map((checkpoint) => checkpoint.id)).toContain(origin.id);
    await fork.kickoff({ bus: new EventBus() });

    const forked = await provider.list(location, { branch: 'what-if' });
    expect(forked.length).toBeGreaterThan(0);
    expect(forked[0]!.parentId).toBe(origin.id);
    expect(await readDocument(provider, location, origin.id)).toEqual(before);
    // A fork point from now on: pruning the original run again keeps it.
    await provider.prune(location, { keep: 1, lineageId: origin.lineageId });
    expect((await provider.list(location)).map((checkpoint) => checkpoint.id)).toContain(origin.id);
  });
});
