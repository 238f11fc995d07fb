// The signal path gives up a run's lineage head before the process ends, while the run goes on; its
// next model call then throws `aborted` (details.reason 'lease_released'). That is a stop, not a
// failure: on a store whose release takes a round trip, the store still accepts the run's writes
// meanwhile, and failure events written then would leave a latest checkpoint that shows a failed
// crew for what was an interrupt. A resume continues the crew where it was, paying nothing twice.
import { type BaseEvent, EventBus } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { lookupFirst, lookupTool, SlowReleaseProvider } from '../checkpointing/test-support/lookup-run.js';
import type { OfflineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';
import { Crew } from './crew.js';

const location = 'mem';

/** Two tasks; with `releaseInTool`, the first lookup gives the lease up as the signal path does. */
function crewOf(llm: OfflineModel, provider: InMemoryProvider, releaseInTool: boolean): Crew {
  const lookup = lookupTool(() => releaseInTool);
  const agent = new Agent({
    role: 'Researcher',
    goal: 'Research',
    backstory: 'Careful',
    llm,
    tools: [lookup],
  });
  return new Crew({
    tasks: [
      new Task({ description: 'look tides up', expectedOutput: 'notes', agent }),
      new Task({ description: 'write about tides', expectedOutput: 'a text', agent }),
    ],
    checkpoint: { provider, location, onEvents: ['*'] },
  });
}

const failureEvents = ['agent_execution_error', 'task_failed', 'crew_kickoff_failed'];

describe('a crew whose lease is given up while it runs', () => {
  it('stops without recording a failure, and a resume pays no call twice', async () => {
    const uninterrupted = lookupFirst();
    await crewOf(uninterrupted, new InMemoryProvider(), false).kickoff({ bus: new EventBus() });

    const provider = new SlowReleaseProvider();
    const first = lookupFirst();
    const bus = new EventBus();
    const events: BaseEvent[] = [];
    bus.onAny((_source: unknown, event: BaseEvent) => void events.push(event));
    await expect(crewOf(first, provider, true).kickoff({ bus })).rejects.toMatchObject({
      code: 'aborted',
      details: { reason: 'lease_released' },
    });
    expect(first.calls).toHaveLength(1);
    const types = events.map((event) => event.type);
    for (const failure of failureEvents) expect(types).not.toContain(failure);
    const saved = await provider.list(location);
    for (const failure of failureEvents)
      expect(saved.map((checkpoint) => checkpoint.trigger)).not.toContain(failure);
    const head = await readDocument(provider, location, saved.at(-1)!.id);
    const crewData = head.entities[0]!.data as { status: string; tasks: { status: string }[] };
    expect(crewData.status).toBe('running');
    expect(crewData.tasks.map((task) => task.status)).toEqual(['running', 'pending']);

    // Another process continues once the release landed.
    await new Promise((resolve) => setTimeout(resolve, 120));
    const second = lookupFirst();
    const resumed = await crewOf(second, provider, false).kickoff({
      bus: new EventBus(),
      fromCheckpoint: { restoreFrom: location, provider },
    });
    expect(resumed.tasksOutput).toHaveLength(2);
    expect(first.calls.length + second.calls.length).toBe(uninterrupted.calls.length);
  });
});
