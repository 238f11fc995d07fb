// Two crews of a flow method, each with a checkpoint setting of its own on one SQLite database, in a
// process that had not imported SQLite yet: their setting is the stand-in of a provider still being
// imported. The first crew's checkpoint went through the stand-in, the second crew's (the import had
// ended) through the provider itself, and the run keeps a chain per provider object: the second
// crew's checkpoint named no parent, though it followed the first crew's in that database.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import type { ProviderRegistry } from '@crewline/runtime-state';
import { afterAll, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { Flow, start } from '../flow/index.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';
import { providerRegistry } from './provider-registry.js';

const root = mkdtempSync(join(tmpdir(), 'crewline-nested-setting-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function crewWithOwnSetting(name: string, location: string, providers: ProviderRegistry): Crew {
  const agent = new Agent({ role: name, goal: 'Work', backstory: 'Careful', llm: offlineModel({ name }) });
  return new Crew({
    name,
    agents: [agent],
    tasks: [new Task({ description: `${name} work`, expectedOutput: 'text', agent })],
    checkpoint: { location, providers },
  });
}

describe('crews of a flow with a SQLite setting of their own, before SQLite is imported', () => {
  it('chain their checkpoints in that database', async () => {
    const database = join(root, 'crews.db');
    // A registry nobody imported SQLite in yet (as a new process); the flow itself checkpoints to JSON.
    const providers = providerRegistry();
    try {
      class TwoCrews extends Flow<{ done: boolean }> {
        initialState = { done: false };
        @start() async work() {
          await crewWithOwnSetting('First', database, providers).kickoff();
          await crewWithOwnSetting('Second', database, providers).kickoff();
          return 'done';
        }
      }
      await new TwoCrews({ bus: new EventBus(), checkpoint: { location: join(root, 'flow') } }).kickoff();
      const { provider } = await providers.open(database);
      const stored = await provider.list(provider.resolveLocation(database));
      expect(stored.map((checkpoint) => checkpoint.trigger)).toEqual(['task_completed', 'task_completed']);
      expect(stored.map((checkpoint) => checkpoint.parentId)).toEqual([null, stored[0]?.id]);
    } finally {
      await providers.close();
    }
  });
});
