import { join } from 'node:path';
import { EventBus } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import {
  checkpointFiles,
  lookupTool,
  readCheckpoint,
  recordEvents,
  toolUsingModel,
} from '../e2e/support/fixtures.js';
import { useTemporaryDirectory } from '../e2e/support/use-temporary-directory.js';
import { StringKnowledgeSource } from '../knowledge/knowledge-source.js';
import { offlineModel } from '../models/offline/offline-model.js';
import { Agent } from './agent.js';

const directory = useTemporaryDirectory();

describe('Agent', () => {
  it('validates its options', () => {
    expect(() => new Agent({ role: 'A', goal: 'B', backstory: 'C', maxIterations: 0 })).toThrow(
      /maxIterations/,
    );
    expect(
      () => new Agent({ role: 'A', goal: 'B', backstory: 'C', checkpoint: { directory: 'x' } as never }),
    ).toThrow(/use `location`/);
    expect(() => new Agent({ goal: 'B', backstory: 'C' } as never)).toThrow(/role/);
  });

  it('kicks off on its own with lite_agent_execution events and templated prompts', async () => {
    const llm = offlineModel();
    const bus = new EventBus();
    const events = recordEvents(bus);
    const agent = new Agent({
      role: 'Researcher of {field}',
      goal: 'Research {field}',
      backstory: 'Expert',
      llm,
    });
    const output = await agent.kickoff('Research AI trends', { inputs: { field: 'robotics' }, bus });
    expect(output.raw).toContain('[offline model]');
    expect(output.agentRole).toBe('Researcher of {field}');
    expect(llm.calls[0]!.system).toContain('You are Researcher of robotics');
    expect(llm.calls[0]!.system).toContain('Research robotics');
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('lite_agent_execution_started');
    expect(types.at(-1)).toBe('lite_agent_execution_completed');
    expect(types).toContain('llm_call_completed');
    expect(events.find((event) => event.type === 'llm_call_completed')!.context).toMatchObject({
      agentId: agent.id,
    });
  });

  it('resumes its saved conversation from a checkpoint without repeating a saved call', async () => {
    const location = join(directory.path, 'cp');
    const failing = toolUsingModel({
      failOn: (call) => call.messages.some((message) => message.role === 'tool'),
    });
    const agent = new Agent({
      role: 'Scout',
      goal: 'Find',
      backstory: 'Curious',
      llm: failing,
      tools: [lookupTool],
      checkpoint: { location, onEvents: ['*'] },
    });
    await expect(agent.kickoff('Find facts about tides')).rejects.toThrow();
    expect(failing.calls).toHaveLength(2); // the tool call, then the failed answer

    const model = toolUsingModel();
    const bus = new EventBus();
    const events = recordEvents(bus);
    const again = new Agent({
      role: 'Scout',
      goal: 'Find',
      backstory: 'Curious',
      llm: model,
      tools: [lookupTool],
    });
    const output = await again.kickoff(undefined, { fromCheckpoint: { restoreFrom: location }, bus });
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    expect(output.raw).toContain('lookup');
    expect(events.map((event) => event.type)).not.toContain('lite_agent_execution_started');
    expect(checkpointFiles(location).length).toBeGreaterThan(5);
  });

  it('Agent.fromCheckpoint and Agent.fork rebuild it from the checkpoint alone', async () => {
    const location = join(directory.path, 'cp');
    const agent = new Agent({
      role: 'Scout',
      goal: 'Find',
      backstory: 'Curious',
      llm: 'offline:scout',
      checkpoint: { location, onEvents: ['llm_call_completed'] },
    });
    const first = await agent.kickoff('Find facts about tides');
    const saved = checkpointFiles(location);
    expect(saved).toHaveLength(1);

    const restored = await Agent.fromCheckpoint({ restoreFrom: saved[0]! });
    expect(restored.id).toBe(agent.id);
    expect((await restored.kickoff()).raw).toBe(first.raw);

    const forked = await Agent.fork({ restoreFrom: saved[0]! }, { branch: 'agent-fork' });
    expect(forked.checkpointBranch).toBe('agent-fork');
    await forked.kickoff();
    expect(checkpointFiles(location)).toHaveLength(1); // a finished conversation makes no new call
  });

  it('remembers its results and searches its knowledge', async () => {
    const llm = offlineModel();
    const agent = new Agent({
      role: 'Scout',
      goal: 'Find',
      backstory: 'Curious',
      llm,
      memory: true,
      knowledgeSources: [
        new StringKnowledgeSource({ name: 'tide-notes', content: 'Tides follow the moon twice a day.' }),
      ],
    });
    await agent.kickoff('Tides: what causes them?');
    expect(llm.calls[0]!.userText).toContain('Relevant knowledge');
    expect(llm.calls[0]!.userText).toContain('tide-notes');
    await agent.kickoff('Tides again: summarize what causes them');
    expect(llm.calls[1]!.userText).toContain('Earlier results you may use');
  });

  it('stores only names: model id and tool names, never objects', async () => {
    const location = join(directory.path, 'cp');
    const agent = new Agent({
      role: 'Scout',
      goal: 'Find',
      backstory: 'Curious',
      llm: offlineModel({ name: 'named' }),
      tools: [lookupTool],
      checkpoint: { location, onEvents: ['lite_agent_execution_completed'] },
    });
    await agent.kickoff('hello');
    const data = readCheckpoint(checkpointFiles(location)[0]!).entities[0]!.data;
    expect(data).toMatchObject({ llm: 'offline:named', tools: ['lookup'], role: 'Scout' });
  });
});
