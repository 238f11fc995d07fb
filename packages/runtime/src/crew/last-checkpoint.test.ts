import { join } from 'node:path';
import { JsonProvider } from '@crewline/provider-json';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { lookupTool, temporaryDirectory, threeTaskCrew, toolUsingModel } from '../e2e/support/fixtures.js';
import { registerProject } from '../project-config/project-config.js';
import { offlineModel } from '../testing/index.js';
import { Crew } from './crew.js';

let directory: { path: string; cleanup: () => void };
beforeEach(() => {
  registerProject({ tools: { lookup: lookupTool } });
  directory = temporaryDirectory();
});
afterEach(() => directory.cleanup());

describe('lastCheckpoint', () => {
  it("is the newest checkpoint of the kickoff, whose lineageId lists the run's checkpoints", async () => {
    const location = join(directory.path, 'cp');
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location } });
    expect(crew.lastCheckpoint).toBeUndefined();
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const last = crew.lastCheckpoint;
    const listed = await new JsonProvider().list(location, { lineageId: last!.lineageId });
    expect(listed).toHaveLength(3); // one per completed task
    expect(last).toMatchObject({
      reference: listed[2]!.reference,
      id: listed[2]!.id,
      parentId: listed[1]!.id,
      branch: 'main',
      trigger: 'task_completed',
    });

    const fork = await Crew.fork({ restoreFrom: listed[0]!.reference }, { branch: 'what-if' });
    await fork.kickoff();
    expect(fork.lastCheckpoint?.branch).toBe('what-if');
    expect(fork.lastCheckpoint?.lineageId).not.toBe(last!.lineageId);
    const forked = await new JsonProvider().list(location, { lineageId: fork.lastCheckpoint!.lineageId });
    expect(forked.map((checkpoint) => checkpoint.reference).at(-1)).toBe(fork.lastCheckpoint?.reference);
    expect(forked[0]!.parentId).toBe(listed[0]!.id);
    expect(crew.lastCheckpoint).toBe(last);
  });

  it('is undefined after a kickoff that stores nothing', async () => {
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: false });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    expect(crew.lastCheckpoint).toBeUndefined();
  });

  it("is a standalone agent's newest checkpoint too", async () => {
    const location = join(directory.path, 'agent');
    const agent = new Agent({
      role: 'Advisor',
      goal: 'Advise',
      backstory: 'Calm',
      llm: offlineModel(),
      checkpoint: { location, onEvents: ['llm_call_completed'] },
    });
    await agent.kickoff('Which tide is higher?');
    const [newest] = (await new JsonProvider().list(location)).slice(-1);
    expect(agent.lastCheckpoint?.reference).toBe(newest!.reference);
  });
});
