import { JsonProvider } from '@crewline/provider-json';
import { type CheckpointConfigInput, SettledValues } from '@crewline/runtime-state';
import type { CrewData } from '@crewline/runtime-state/internal';
import { describe, expect, it } from 'vitest';
import { threeTaskCrew } from '../e2e/support/fixtures.js';
import { ShortTermMemory } from '../memory/short-term-memory.js';
import { offlineModel } from '../models/offline/offline-model.js';

function dataOf(snapshot: { data: unknown }): CrewData {
  return snapshot.data as CrewData;
}

function crewWithSetting() {
  const checkpoint: CheckpointConfigInput = { location: './crew-checkpoints', onEvents: ['task_completed'] };
  const { crew } = threeTaskCrew(offlineModel(), { checkpoint });
  return { crew, checkpoint };
}

describe("a crew's seldom-changing parts in its snapshot", () => {
  it('are the same settled objects while nothing changes', () => {
    const { crew } = crewWithSetting();
    const settled = new SettledValues();
    const first = dataOf(crew.snapshotEntity(settled));
    const second = dataOf(crew.snapshotEntity(settled));
    expect(second.checkpoint).toBe(first.checkpoint);
    expect(second.agents).toBe(first.agents);
    expect(second.probeUsage).toBe(first.probeUsage);
    for (const part of [second.checkpoint, second.agents, second.probeUsage])
      expect(settled.has(part as object)).toBe(true);
  });

  it('store a checkpoint setting changed in place', () => {
    const { crew, checkpoint } = crewWithSetting();
    const settled = new SettledValues();
    crew.snapshotEntity(settled);
    checkpoint.location = './elsewhere';
    expect(dataOf(crew.snapshotEntity(settled)).checkpoint).toEqual({
      location: './elsewhere',
      onEvents: ['task_completed'],
    });
    (checkpoint.onEvents as string[]).push('llm_call_completed');
    expect(dataOf(crew.snapshotEntity(settled)).checkpoint).toMatchObject({
      onEvents: ['task_completed', 'llm_call_completed'],
    });
    checkpoint.maxCheckpoints = 3;
    checkpoint.provider = new JsonProvider();
    expect(dataOf(crew.snapshotEntity(settled)).checkpoint).toMatchObject({
      maxCheckpoints: 3,
      providerKind: 'json',
    });
    crew.checkpoint = false;
    expect(dataOf(crew.snapshotEntity(settled)).checkpoint).toBe(false);
  });

  it('store probe usage added in place', () => {
    const { crew } = crewWithSetting();
    const settled = new SettledValues();
    const before = dataOf(crew.snapshotEntity(settled)).probeUsage;
    crew.probeUsage.inputTokens += 5;
    crew.probeUsage.totalTokens += 5;
    const after = dataOf(crew.snapshotEntity(settled)).probeUsage;
    expect(after).not.toBe(before);
    expect(after).toMatchObject({ inputTokens: before.inputTokens + 5, totalTokens: before.totalTokens + 5 });
    expect(before.inputTokens).toBe(0);
  });

  it('store an agent whose definition changed, and the memory of an agent with memory', () => {
    const { crew } = crewWithSetting();
    const settled = new SettledValues();
    const before = dataOf(crew.snapshotEntity(settled)).agents;
    crew.agents[1]!.checkpoint = false;
    const changed = dataOf(crew.snapshotEntity(settled)).agents;
    expect(changed).not.toBe(before);
    expect(changed[1]!.checkpoint).toBe(false);
    expect(changed[0]).toBe(before[0]);

    const memory = new ShortTermMemory();
    crew.agents[0]!.memory = memory;
    memory.save('first note');
    const withMemory = dataOf(crew.snapshotEntity(settled)).agents;
    expect(settled.has(withMemory)).toBe(false);
    memory.save('second note');
    const later = dataOf(crew.snapshotEntity(settled)).agents;
    expect(later).not.toBe(withMemory);
    expect(JSON.stringify(later[0]!.memory)).toContain('second note');
  });
});
