// One loader for every restore: the same reference forms, the same id prefixes and the same restore
// events, whether a crew, an agent or a flow is restored, with or without a provider in the config.
import { CheckpointRestoreCompletedEvent, CheckpointRestoreStartedEvent, EventBus } from '@crewline/events';
import { InMemoryProvider } from '@crewline/runtime-state/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Crew } from '../crew/crew.js';
import { lookupTool, offlineModel, threeTaskCrew, toolUsingModel } from '../e2e/support/fixtures.js';
import { Flow, listen, persist, start } from '../flow/index.js';
import { executions, LinearFlow } from '../flow/test-support/scenarios.js';
import { registerProject } from '../project-config/project-config.js';

beforeEach(() => {
  registerProject({ tools: { lookup: lookupTool } });
});
afterEach(() => {
  executions.length = 0;
});

/** The random part of an id (what people copy: `3f9a2b1c`), minus its last character. */
function shortened(id: string): string {
  return id.slice(id.lastIndexOf('-') + 1, -1);
}

describe('a checkpoint id prefix', () => {
  it('restores a crew, an agent and a flow alike, with the provider the config names', async () => {
    const provider = new InMemoryProvider();
    await threeTaskCrew(toolUsingModel(), { checkpoint: { location: 'crews', provider } }).crew.kickoff({
      inputs: { topic: 'AI' },
    });
    const [first] = await provider.list('crews');
    const crew = await Crew.fromCheckpoint({ restoreFrom: `crews#${shortened(first!.id)}`, provider });
    expect(crew.lastRun).toBeUndefined();
    expect(crew.tasks.filter((task) => task.status === 'completed')).toHaveLength(1);

    const agent = new Agent({
      role: 'Analyst',
      goal: 'Answer',
      backstory: 'Expert',
      llm: offlineModel(),
      checkpoint: { location: 'agents', provider, onEvents: ['lite_agent_execution_completed'] },
    });
    await agent.kickoff('What is a tide?');
    const [saved] = await provider.list('agents');
    const restoredAgent = await Agent.fromCheckpoint({
      restoreFrom: `agents#${saved!.id.slice(0, -2)}`,
      provider,
    });
    expect(restoredAgent.status).toBe('completed');

    await new LinearFlow({
      bus: new EventBus(),
      checkpoint: { location: 'flows', provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    const [firstOfFlow] = await provider.list('flows');
    const flow = await LinearFlow.fromCheckpoint({
      restoreFrom: `flows#${shortened(firstOfFlow!.id)}`,
      provider,
    });
    expect(flow.completedMethods).toEqual(['fetch']);
  });

  it('that matches several checkpoints is ambiguous_reference for every entity', async () => {
    const provider = new InMemoryProvider();
    await threeTaskCrew(toolUsingModel(), { checkpoint: { location: 'crews', provider } }).crew.kickoff({
      inputs: { topic: 'AI' },
    });
    await new LinearFlow({
      bus: new EventBus(),
      checkpoint: { location: 'crews', provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    const [first] = await provider.list('crews');
    // The date part is shared by every checkpoint written today.
    const shared = `crews#${first!.id.slice(0, 8)}`;
    await expect(Crew.fromCheckpoint({ restoreFrom: shared, provider })).rejects.toMatchObject({
      code: 'ambiguous_reference',
    });
    await expect(LinearFlow.fromCheckpoint({ restoreFrom: shared, provider })).rejects.toMatchObject({
      code: 'ambiguous_reference',
    });
    await expect(
      new LinearFlow({ bus: new EventBus() }).kickoff({ fromCheckpoint: { restoreFrom: shared, provider } }),
    ).rejects.toMatchObject({ code: 'ambiguous_reference' });
  });
});

describe('restore events', () => {
  it('are emitted for a flow read through the provider its config names, as for a crew', async () => {
    const provider = new InMemoryProvider();
    await new LinearFlow({
      bus: new EventBus(),
      checkpoint: { location: 'flows', provider, onEvents: ['method_execution_finished'] },
    }).kickoff();
    const bus = new EventBus();
    const types: string[] = [];
    bus.onAny((_source, event) => {
      types.push(event.type);
    });
    await LinearFlow.fromCheckpoint({ restoreFrom: 'flows', provider }, { bus });
    expect(types.filter((type) => type.startsWith('checkpoint_restore'))).toEqual([
      CheckpointRestoreStartedEvent.type,
      CheckpointRestoreCompletedEvent.type,
    ]);
  });

  it('are emitted when a persisted flow state is found by its id, as for a reference', async () => {
    const provider = new InMemoryProvider();
    const control = { failing: true };
    @persist({ location: 'states', provider })
    class Counter extends Flow<{ value: number }> {
      initialState = { value: 0 };
      @start() increment() {
        this.state.value += 1;
      }
      @listen('increment') report() {
        if (control.failing) throw new Error('network down');
        return this.state.value;
      }
    }
    await expect(new Counter({ bus: new EventBus() }).kickoff({ inputs: { id: 'one' } })).rejects.toThrow();
    control.failing = false;
    const bus = new EventBus();
    const types: string[] = [];
    bus.onAny((_source, event) => {
      types.push(event.type);
    });
    const result = await new Counter({ bus }).kickoff({ inputs: { id: 'one' } });
    expect(result.output).toBe(1);
    expect(types.filter((type) => type.startsWith('checkpoint_restore'))).toEqual([
      CheckpointRestoreStartedEvent.type,
      CheckpointRestoreCompletedEvent.type,
    ]);
  });
});
