import { SettledValues } from '@crewline/runtime-state';
import type { CrewData } from '@crewline/runtime-state/internal';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { Task } from '../task/task.js';
import { Crew } from './crew.js';

function crewDataOf(snapshot: { data: unknown }): CrewData {
  return snapshot.data as CrewData;
}

function crewOfTwoAgents() {
  const first = new Agent({ role: 'First', goal: 'G', backstory: 'B' });
  const second = new Agent({ role: 'Second', goal: 'G', backstory: 'B' });
  const task = new Task({ description: 'D', expectedOutput: 'E', agent: first });
  const crew = new Crew({ agents: [first, second], tasks: [task] });
  const agentIndex = (settled?: SettledValues) => crewDataOf(crew.snapshotEntity(settled)).tasks[0]!.agent;
  return { first, second, task, crew, agentIndex };
}

describe("a task's stored form", () => {
  it('names the agent a pending task was given since (a resume runs it with that agent)', () => {
    const { second, task, agentIndex } = crewOfTwoAgents();
    const run = new SettledValues();
    expect(agentIndex(run)).toBe(0);
    task.agent = second;
    expect(agentIndex(run)).toBe(1);
    expect(agentIndex(new SettledValues())).toBe(1);
    expect(agentIndex()).toBe(1);
  });

  it("follows the crew's agents reordered in place", () => {
    const { crew, agentIndex } = crewOfTwoAgents();
    const run = new SettledValues();
    expect(agentIndex(run)).toBe(0);
    crew.agents.reverse();
    expect(agentIndex(run)).toBe(1);
  });

  it('is the same settled object while nothing it is built from changes', () => {
    const { crew } = crewOfTwoAgents();
    const run = new SettledValues();
    const tasksOf = () => crewDataOf(crew.snapshotEntity(run)).tasks;
    const first = tasksOf();
    expect(tasksOf()).toBe(first);
    expect(tasksOf()[0]).toBe(first[0]);
    expect(run.has(first[0]!)).toBe(true);
  });
});
