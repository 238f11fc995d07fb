// Found by a new-user trial (s8, finding 5): a crew without a name (the runtime names it "crew") was
// said "crew crew on vm, pid …" in the refusal another process got while the crew ran.
import { EventBus } from '@crewline/events';
import type { Lease, LeaseRequest } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { Task } from '../task/task.js';
import { offlineModel } from '../testing/index.js';

/** Records the holder each lease claim names: what a refusal to another process says. */
class HolderRecordingProvider extends InMemoryProvider {
  readonly holders: string[] = [];
  override async claimLease(location: string, request: LeaseRequest): Promise<Lease> {
    this.holders.push(request.holder);
    return super.claimLease(location, request);
  }
}

async function holderOf(name: string | undefined): Promise<string> {
  const provider = new HolderRecordingProvider();
  const agent = new Agent({ role: 'Editor', goal: 'Edit', backstory: 'Plain', llm: offlineModel() });
  const crew = new Crew({
    ...(name === undefined ? {} : { name }),
    agents: [agent],
    tasks: [new Task({ description: 'Edit a draft', expectedOutput: 'text', agent })],
    checkpoint: { location: 'mem', provider, onEvents: ['task_completed'] },
  });
  await crew.kickoff({ bus: new EventBus() });
  expect(provider.holders.length).toBeGreaterThan(0);
  return provider.holders[0]!;
}

describe('the holder a lineage lease names', () => {
  it('says a crew without a name once: "crew on HOST", not "crew crew on HOST"', async () => {
    expect(await holderOf(undefined)).toMatch(/^crew on .+, pid \d+$/);
  });

  it('says a named crew with its name', async () => {
    expect(await holderOf('Research')).toMatch(/^crew Research on .+, pid \d+$/);
  });
});
