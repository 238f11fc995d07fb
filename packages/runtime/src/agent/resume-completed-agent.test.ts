// A standalone agent resumed at its completed end gives its saved output back and writes nothing,
// like a crew or a flow (src/restore/resume-completed-run.test.ts): its lite_agent_execution_completed
// is in its history already, and announcing it again would add a checkpoint that says nothing new,
// once per resume (with maxCheckpoints, pushing the run's older ones out). An agent stopped after its
// final answer but before that event still ends on resume, and says so once.
import { type BaseEvent, EventBus } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { lookupTool, recordEvents, toolUsingModel } from '../e2e/support/fixtures.js';
import { type OfflineModel, offlineModel } from '../models/offline/offline-model.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { Agent } from './agent.js';

const location = 'mem';
const completed = 'lite_agent_execution_completed';

const typesOf = (events: readonly BaseEvent[]) => events.map((event) => event.type);
/** What the continued run itself emitted: the restore announces itself on the bus it is given. */
const runEventTypes = (events: readonly BaseEvent[]) =>
  typesOf(events).filter((type) => !type.startsWith('checkpoint_restore_'));

function scout(model: OfflineModel, provider?: InMemoryProvider): Agent {
  return new Agent({
    role: 'Scout',
    goal: 'Find',
    backstory: 'Curious',
    llm: model,
    tools: [lookupTool],
    ...(provider ? { checkpoint: { location, provider, onEvents: ['*'] } } : {}),
  });
}

async function completedRun(provider: InMemoryProvider) {
  return scout(toolUsingModel(), provider).kickoff('Find facts about tides');
}

/** Resumed with `Agent.fromCheckpoint`: its tool and model found by the names the checkpoint stored. */
async function resumeRebuilt(provider: InMemoryProvider) {
  const model = toolUsingModel();
  const registry = new ProjectRegistry().register({
    tools: { lookup: lookupTool },
    models: { 'offline:default': model },
  });
  const bus = new EventBus();
  const events = recordEvents(bus);
  const restored = await Agent.fromCheckpoint({ restoreFrom: location, provider }, { registry });
  expect(restored.llm).toBe(model);
  const output = await restored.kickoff(undefined, { bus });
  return { output, events, calls: model.calls, restored };
}

/** Resumed with `kickoff({ fromCheckpoint })` on an agent given its model again. */
async function resumeInPlace(provider: InMemoryProvider) {
  const model = toolUsingModel();
  const bus = new EventBus();
  const events = recordEvents(bus);
  const agent = scout(model);
  const output = await agent.kickoff(undefined, { fromCheckpoint: { restoreFrom: location, provider }, bus });
  return { output, events, calls: model.calls, restored: agent };
}

describe('a standalone agent resumed', () => {
  it('at its completed end gives its saved output back and writes nothing, however often', async () => {
    const provider = new InMemoryProvider();
    const first = await completedRun(provider);
    const saved = await provider.list(location);
    expect(saved.at(-1)!.trigger).toBe(completed);
    for (const [attempt, resume] of [resumeRebuilt, resumeInPlace, resumeRebuilt].entries()) {
      const { output, events, calls, restored } = await resume(provider);
      expect(output.raw, `resume ${attempt}`).toBe(first.raw);
      expect(output.usage, `resume ${attempt}`).toEqual(first.usage);
      expect(output.messages, `resume ${attempt}`).toEqual(first.messages);
      expect(calls, `resume ${attempt}`).toHaveLength(0);
      expect(runEventTypes(events), `resume ${attempt}`).toEqual([]);
      expect(restored.lastCheckpoint, `resume ${attempt}`).toBeUndefined();
      expect(await provider.list(location), `resume ${attempt}`).toEqual(saved);
    }
  });

  it('after its final answer but before its end still ends, checkpointed once, without a model call', async () => {
    const provider = new InMemoryProvider();
    const first = await completedRun(provider);
    // Killed right before lite_agent_execution_completed: its final answer is saved, its end is not.
    const all = await provider.list(location);
    const end = all.findIndex((checkpoint) => checkpoint.trigger === completed);
    for (const later of all.slice(end)) await provider.delete(location, later.id);
    const before = await provider.list(location);
    expect(before.at(-1)!.trigger).toBe('llm_call_completed');

    const { output, events, calls, restored } = await resumeRebuilt(provider);
    expect(output.raw).toBe(first.raw);
    expect(output.usage).toEqual(first.usage);
    expect(calls).toHaveLength(0);
    expect(typesOf(events).filter((type) => type === completed)).toHaveLength(1);
    const after = await provider.list(location);
    expect(after.slice(before.length).map((checkpoint) => checkpoint.trigger)).toEqual([completed]);
    expect(restored.lastCheckpoint?.id).toBe(after.at(-1)!.id);
    // That end is now in the run's history: a resume of it adds nothing more.
    const again = await resumeInPlace(provider);
    expect(again.output.raw).toBe(first.raw);
    expect(runEventTypes(again.events)).toEqual([]);
    expect(await provider.list(location)).toEqual(after);
  });

  it('at its completed end gives its saved structured answer back, parsed with the schema given', async () => {
    const provider = new InMemoryProvider();
    const outputSchema = z.object({ summary: z.string() });
    const checkpoint = { location, provider, onEvents: ['*' as const] };
    const first = await new Agent({
      role: 'Scout',
      goal: 'Find',
      backstory: 'Curious',
      llm: offlineModel(),
      checkpoint,
    }).kickoff('Summarize the tides', { outputSchema });
    expect(outputSchema.parse(first.structured)).toEqual(first.structured);
    const saved = await provider.list(location);
    const model = offlineModel();
    const output = await new Agent({ role: 'Scout', goal: 'Find', backstory: 'Curious', llm: model }).kickoff(
      undefined,
      { fromCheckpoint: { restoreFrom: location, provider }, outputSchema },
    );
    expect(output.raw).toBe(first.raw);
    expect(output.structured).toEqual(first.structured);
    expect(model.calls).toHaveLength(0);
    expect(await provider.list(location)).toEqual(saved);
  });
});
