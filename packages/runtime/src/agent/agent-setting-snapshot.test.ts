import { type CheckpointConfigInput, SettledValues } from '@crewline/runtime-state';
import { describe, expect, it } from 'vitest';
import { Crew } from '../crew/crew.js';
import { Task } from '../task/task.js';
import { Agent } from './agent.js';

function settingOf(data: unknown): unknown {
  return (data as { checkpoint: unknown }).checkpoint;
}

function agentWith(checkpoint: CheckpointConfigInput): Agent {
  return new Agent({ role: 'Researcher', goal: 'Research', backstory: 'Expert', checkpoint });
}

describe("an agent's checkpoint setting in its snapshot", () => {
  it('is the same settled object while unchanged, and stored anew once changed in place', () => {
    const onEvents: Extract<CheckpointConfigInput['onEvents'], readonly unknown[]>[number][] = [
      'llm_call_completed',
    ];
    const checkpoint: CheckpointConfigInput = { location: './a', onEvents };
    const agent = agentWith(checkpoint);
    const settled = new SettledValues();
    const first = settingOf(agent.snapshotEntity(settled).data);
    expect(settingOf(agent.snapshotEntity(settled).data)).toBe(first);
    expect(settled.has(first as object)).toBe(true);
    checkpoint.location = './b';
    expect(settingOf(agent.snapshotEntity(settled).data)).toEqual({
      location: './b',
      onEvents: ['llm_call_completed'],
    });
    // Outside a run too (no settled values).
    onEvents.push('task_completed');
    expect(settingOf(agent.snapshotEntity().data)).toEqual({
      location: './b',
      onEvents: ['llm_call_completed', 'task_completed'],
    });
  });

  it("is stored anew in its crew's agent list once changed in place", () => {
    const checkpoint: CheckpointConfigInput = { location: './a' };
    const agent = agentWith(checkpoint);
    const crew = new Crew({
      agents: [agent],
      tasks: [new Task({ description: 'Research', expectedOutput: 'Notes', agent })],
    });
    const settled = new SettledValues();
    const agentsOf = () => (crew.snapshotEntity(settled).data as { agents: unknown[] }).agents;
    expect(settingOf(agentsOf()[0])).toEqual({ location: './a' });
    checkpoint.location = './b';
    expect(settingOf(agentsOf()[0])).toEqual({ location: './b' });
  });
});
