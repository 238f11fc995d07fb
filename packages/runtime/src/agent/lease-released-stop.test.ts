// The signal path gives up a run's lineage head before the process ends, while the run goes on; a
// standalone agent's next model call then throws `aborted` (details.reason 'lease_released'). That is
// a stop, not a failure: no lite_agent_execution_error (a checkpoint written on it while the release
// is in flight would show a failed agent for an interrupt), and a resume continues the conversation.
import { type BaseEvent, EventBus } from '@crewline/events';
import type { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { lookupFirst, lookupTool, SlowReleaseProvider } from '../checkpointing/test-support/lookup-run.js';
import type { OfflineModel } from '../models/offline/offline-model.js';
import { Agent } from './agent.js';

const location = 'mem';

function scout(llm: OfflineModel, provider: InMemoryProvider, releaseInTool: boolean): Agent {
  const lookup = lookupTool(() => releaseInTool);
  return new Agent({
    role: 'Scout',
    goal: 'Find',
    backstory: 'Curious',
    llm,
    tools: [lookup],
    checkpoint: { provider, location, onEvents: ['*'] },
  });
}

describe('a standalone agent whose lease is given up while it runs', () => {
  it('stops without recording a failure, and a resume continues its conversation', async () => {
    const provider = new SlowReleaseProvider();
    const first = lookupFirst();
    const bus = new EventBus();
    const events: BaseEvent[] = [];
    bus.onAny((_source: unknown, event: BaseEvent) => void events.push(event));
    await expect(
      scout(first, provider, true).kickoff('Find facts about tides', { bus }),
    ).rejects.toMatchObject({
      code: 'aborted',
      details: { reason: 'lease_released' },
    });
    expect(first.calls).toHaveLength(1);
    expect(events.map((event) => event.type)).not.toContain('lite_agent_execution_error');
    const saved = await provider.list(location);
    expect(saved.map((checkpoint) => checkpoint.trigger)).not.toContain('lite_agent_execution_error');

    await new Promise((resolve) => setTimeout(resolve, 120));
    const second = lookupFirst();
    const resumed = await scout(second, provider, false).kickoff(undefined, {
      bus: new EventBus(),
      fromCheckpoint: { restoreFrom: location, provider },
    });
    expect(resumed.raw).toContain('offline model');
    // The lookup's result was saved: only the answer is asked for.
    expect(second.calls).toHaveLength(1);
  });
});
