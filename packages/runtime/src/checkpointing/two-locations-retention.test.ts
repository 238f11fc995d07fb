// A crew checkpointing to one location whose agent has a checkpoint setting of its own (another
// location, as Task -> Agent -> Crew inheritance allows): the run's checkpoints alternate between
// the two. Each location keeps a chain of its own, so maxCheckpoints holds in each. Before, every
// checkpoint named the run's previous one, held by the other location: no checkpoint was ever
// "continued" where it was stored, and maxCheckpoints removed nothing (8 kept of a bound of 2).
import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { JsonProvider } from '@crewline/provider-json';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { temporaryDirectory } from '../e2e/support/fixtures.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';

let directory: { path: string; cleanup: () => void };
beforeEach(() => {
  directory = temporaryDirectory('crewline-two-locations-');
});
afterEach(() => directory.cleanup());

async function runCrew(agentHasOwnLocation: boolean) {
  const crewLocation = join(directory.path, 'crew');
  const agentLocation = join(directory.path, 'agent');
  const provider = new JsonProvider();
  const researcher = new Agent({
    role: 'Researcher',
    goal: 'Research',
    backstory: 'Careful',
    llm: offlineModel({ name: 'researcher' }),
    ...(agentHasOwnLocation
      ? {
          checkpoint: {
            location: agentLocation,
            provider,
            onEvents: ['llm_call_completed' as const],
            maxCheckpoints: 2,
          },
        }
      : {}),
  });
  const writer = new Agent({
    role: 'Writer',
    goal: 'Write',
    backstory: 'Clear',
    llm: offlineModel({ name: 'writer' }),
  });
  const crew = new Crew({
    agents: [researcher, writer],
    tasks: Array.from(
      { length: 12 },
      (_, index) =>
        new Task({
          description: `work ${index}`,
          expectedOutput: 'notes',
          agent: index % 2 === 0 ? researcher : writer,
        }),
    ),
    checkpoint: { location: crewLocation, provider, onEvents: ['*'], maxCheckpoints: 2 },
  });
  await crew.kickoff({ bus: new EventBus() });
  return { crew: await provider.list(crewLocation), agent: await provider.list(agentLocation) };
}

describe('maxCheckpoints with an agent checkpointing to a location of its own', () => {
  it('one location: the crew keeps 2', async () => {
    expect((await runCrew(false)).crew).toHaveLength(2);
  });

  it('two locations: each keeps 2, and each checkpoint names a parent stored beside it', async () => {
    const kept = await runCrew(true);
    expect(kept.crew).toHaveLength(2);
    expect(kept.agent).toHaveLength(2);
    for (const checkpoints of [kept.crew, kept.agent]) {
      expect(checkpoints[1]!.parentId).toBe(checkpoints[0]!.id);
    }
  });
});
