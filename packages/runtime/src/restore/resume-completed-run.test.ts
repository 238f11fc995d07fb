// A run resumed at its completed end gives its saved result back and writes nothing: its end is in
// its history already, so announcing it again (and checkpointing on that) would add a checkpoint that
// says nothing new, once per resume, and with maxCheckpoints push the run's older ones out. A run
// stopped after its last piece of work but before its end event still ends on resume, and says so.
import { type BaseEvent, EventBus } from '@crewline/events';
import { readDocument } from '@crewline/runtime-state';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Crew } from '../crew/crew.js';
import { recordEvents, threeTaskCrew, toolUsingModel } from '../e2e/support/fixtures.js';
import { executions, model as flowModel, TwoCrewFlow } from '../flow/test-support/crew-scenarios.js';

const location = 'mem';

afterEach(() => {
  executions.length = 0;
  flowModel.reset();
});

const typesOf = (events: readonly BaseEvent[]) => events.map((event) => event.type);

/** Removes the run's checkpoints after the last one with `trigger`: as if it was killed right there. */
async function killedAfterLast(provider: InMemoryProvider, trigger: string): Promise<void> {
  const checkpoints = await provider.list(location);
  const last = checkpoints.findLastIndex((checkpoint) => checkpoint.trigger === trigger);
  for (const later of checkpoints.slice(last + 1)) await provider.delete(location, later.id);
}

describe('a crew resumed', () => {
  const onEvents = ['task_completed' as const, 'crew_kickoff_completed' as const];

  async function completedRun(provider: InMemoryProvider) {
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location, provider, onEvents } });
    return crew.kickoff({ inputs: { topic: 'AI' } });
  }

  async function resume(provider: InMemoryProvider) {
    const model = toolUsingModel();
    const bus = new EventBus();
    const events = recordEvents(bus);
    const restored = await Crew.fromCheckpoint({ restoreFrom: location, provider });
    const output = await restored.kickoff({ bus });
    return { output, events, model, restored };
  }

  it('at its completed end gives its saved output back and writes nothing, however often', async () => {
    const provider = new InMemoryProvider();
    const first = await completedRun(provider);
    const saved = await provider.list(location);
    expect(saved.map((checkpoint) => checkpoint.trigger)).toEqual([
      'task_completed',
      'task_completed',
      'task_completed',
      'crew_kickoff_completed',
    ]);
    for (const attempt of [1, 2, 3]) {
      const { output, events, model, restored } = await resume(provider);
      expect(output.raw, `resume ${attempt}`).toBe(first.raw);
      expect(output.tokenUsage, `resume ${attempt}`).toEqual(first.tokenUsage);
      expect(model.calls, `resume ${attempt}`).toHaveLength(0);
      expect(typesOf(events), `resume ${attempt}`).not.toContain('crew_kickoff_completed');
      expect(restored.lastCheckpoint, `resume ${attempt}`).toBeUndefined();
      expect(await provider.list(location), `resume ${attempt}`).toEqual(saved);
    }
  });

  it('after its last task but before its end still ends, checkpointed once, without a model call', async () => {
    const provider = new InMemoryProvider();
    const first = await completedRun(provider);
    await killedAfterLast(provider, 'task_completed');
    const { output, events, model, restored } = await resume(provider);
    expect(output.raw).toBe(first.raw);
    expect(model.calls).toHaveLength(0);
    expect(typesOf(events).filter((type) => type === 'crew_kickoff_completed')).toHaveLength(1);
    const after = await provider.list(location);
    expect(after.map((checkpoint) => checkpoint.trigger)).toEqual([
      'task_completed',
      'task_completed',
      'task_completed',
      'crew_kickoff_completed',
    ]);
    expect(restored.lastCheckpoint?.id).toBe(after.at(-1)!.id);
    // That end is now in the run's history: a resume of it adds nothing more.
    await resume(provider);
    expect(await provider.list(location)).toEqual(after);
  });
});

describe('a flow resumed', () => {
  async function completedRun(provider: InMemoryProvider) {
    return new TwoCrewFlow({
      bus: new EventBus(),
      checkpoint: { location, provider, onEvents: ['*'] },
    }).kickoff();
  }

  async function resume(provider: InMemoryProvider) {
    executions.length = 0;
    flowModel.reset();
    const bus = new EventBus();
    const events = recordEvents(bus);
    const restored = await TwoCrewFlow.fromCheckpoint({ restoreFrom: location, provider }, { bus });
    const result = await restored.kickoff();
    return { result, events };
  }

  it('at its finished end gives its saved result back and writes nothing, however often', async () => {
    const provider = new InMemoryProvider();
    const first = await completedRun(provider);
    const saved = await provider.list(location);
    expect(saved.at(-1)!.trigger).toBe('flow_finished');
    for (const attempt of [1, 2, 3]) {
      const { result, events } = await resume(provider);
      expect(result.status, `resume ${attempt}`).toBe('completed');
      expect(result.state, `resume ${attempt}`).toEqual(first.state);
      expect(result.output, `resume ${attempt}`).toBe(first.output);
      expect(result.checkpoint, `resume ${attempt}`).toBeUndefined();
      expect(flowModel.calls, `resume ${attempt}`).toHaveLength(0);
      expect(executions, `resume ${attempt}`).toEqual([]);
      expect(typesOf(events), `resume ${attempt}`).not.toContain('flow_finished');
      expect(await provider.list(location), `resume ${attempt}`).toEqual(saved);
    }
  });

  it('after its last method but before its end still finishes, checkpointed once', async () => {
    const provider = new InMemoryProvider();
    const first = await completedRun(provider);
    await killedAfterLast(provider, 'method_execution_finished');
    const before = await provider.list(location);
    const { result, events } = await resume(provider);
    expect(result.state).toEqual(first.state);
    expect(flowModel.calls).toHaveLength(0);
    expect(executions).toEqual([]);
    expect(typesOf(events).filter((type) => type === 'flow_finished')).toHaveLength(1);
    const after = await provider.list(location);
    expect(after.slice(before.length).map((checkpoint) => checkpoint.trigger)).toEqual(['flow_finished']);
    expect(result.checkpoint).toBe(after.at(-1)!.reference);
    await resume(provider);
    expect(await provider.list(location)).toEqual(after);
  });

  it("whose method's crew had completed re-runs the method without announcing that crew's end again", async () => {
    const provider = new InMemoryProvider();
    const first = await completedRun(provider);
    // Killed as the second crew ended, before its method ("write") finished.
    await killedAfterLast(provider, 'crew_kickoff_completed');
    const before = await provider.list(location);
    const head = await readDocument(provider, location, before.at(-1)!.id);
    expect(
      typesOf(head.events as unknown as BaseEvent[]).filter((type) => type === 'crew_kickoff_completed'),
    ).toHaveLength(2);
    const { result, events } = await resume(provider);
    expect(result.state).toEqual(first.state);
    expect(flowModel.calls).toHaveLength(0);
    expect(executions).toEqual(['write']);
    expect(typesOf(events)).not.toContain('crew_kickoff_completed');
    const after = await provider.list(location);
    expect(after.slice(before.length).map((checkpoint) => checkpoint.trigger)).toEqual([
      'method_execution_started',
      'method_execution_finished',
      'flow_finished',
    ]);
  });
});
