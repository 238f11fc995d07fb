import { SettledValues } from '@crewline/runtime-state';
import type { AgentDefinitionData } from '@crewline/runtime-state/internal';
import { describe, expect, it } from 'vitest';
import { Crew } from '../crew/crew.js';
import { KnowledgeBase } from '../knowledge/knowledge-base.js';
import { StringKnowledgeSource } from '../knowledge/knowledge-source.js';
import { Task } from '../task/task.js';
import { Agent } from './agent.js';

function definitionOf(data: unknown): AgentDefinitionData {
  return data as AgentDefinitionData;
}

describe("an agent's definition in its snapshot", () => {
  it('stores call settings changed in place (the model calls use the live ones)', () => {
    const settings = { temperature: 0.2 };
    const agent = new Agent({ role: 'R', goal: 'G', backstory: 'B', settings });
    const settled = new SettledValues();
    const first = definitionOf(agent.snapshotEntity(settled).data);
    expect(first.settings).toEqual({ temperature: 0.2 });
    // Kept while nothing changes: the same settled object.
    expect(definitionOf(agent.snapshotEntity(settled).data).settings).toBe(first.settings);
    settings.temperature = 0.9;
    expect(definitionOf(agent.snapshotEntity(settled).data).settings).toEqual({ temperature: 0.9 });
  });

  it("stores them in its crew's agent list, in a later run and outside a run too", () => {
    const settings = { temperature: 0.2 };
    const agent = new Agent({ role: 'R', goal: 'G', backstory: 'B', settings });
    const crew = new Crew({
      agents: [agent],
      tasks: [new Task({ description: 'D', expectedOutput: 'E', agent })],
    });
    const settingsOf = (settled?: SettledValues) =>
      (crew.snapshotEntity(settled).data as { agents: AgentDefinitionData[] }).agents[0]!.settings;
    expect(settingsOf(new SettledValues())).toEqual({ temperature: 0.2 });
    settings.temperature = 0.9;
    expect(settingsOf(new SettledValues())).toEqual({ temperature: 0.9 });
    expect(settingsOf()).toEqual({ temperature: 0.9 });
  });

  it('stores a crew and an agent knowledge base the same way', () => {
    const knowledge = new KnowledgeBase({
      sources: [new StringKnowledgeSource({ content: 'Crewline keeps checkpoints.', name: 'notes' })],
    });
    const agent = new Agent({ role: 'R', goal: 'G', backstory: 'B' });
    agent.knowledge = knowledge;
    const crew = new Crew({
      agents: [agent],
      tasks: [new Task({ description: 'D', expectedOutput: 'E', agent })],
    });
    crew.knowledge = knowledge;
    const data = crew.snapshotEntity(new SettledValues()).data as {
      knowledge: unknown;
      agents: AgentDefinitionData[];
    };
    expect(data.knowledge).toEqual(knowledge.toJSON());
    expect(data.agents[0]!.knowledge).toBe(data.knowledge);
  });
});
