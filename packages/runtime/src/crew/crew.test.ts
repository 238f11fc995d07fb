import { join } from 'node:path';
import { type BaseEvent, EventBus } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../agent/agent.js';
import {
  checkpointFiles,
  lookupTool,
  readCheckpoint,
  recordEvents,
  threeTaskCrew,
  toolUsingModel,
} from '../e2e/support/fixtures.js';
import { useTemporaryDirectory } from '../e2e/support/use-temporary-directory.js';
import { StringKnowledgeSource } from '../knowledge/knowledge-source.js';
import { type OfflineModelOptions, offlineModel } from '../models/offline/offline-model.js';
import { Task } from '../task/task.js';
import { captureLogs } from '../testing/index.js';
import { Crew } from './crew.js';
import { DELEGATION_TOOL_NAME } from './delegation.js';

const directory = useTemporaryDirectory();

describe('Crew construction', () => {
  const llm = offlineModel();
  const agent = new Agent({ role: 'A', goal: 'G', backstory: 'B', llm });

  it('names what is wrong', () => {
    expect(() => new Crew({ tasks: [] })).toThrow(/tasks/);
    expect(() => new Crew({ tasks: [new Task({ description: 'x', expectedOutput: 'y' })] })).toThrow(
      /has no agent/,
    );
    const first = new Task({ description: 'first', expectedOutput: 'y', agent });
    const later = new Task({ description: 'later', expectedOutput: 'y', agent, context: [first] });
    expect(() => new Crew({ tasks: [later, first] })).toThrow(/does not come before/);
    expect(() => new Crew({ tasks: [first, first] })).toThrow(/appears twice/);
    expect(() => new Crew({ tasks: [first], process: 'hierarchical' })).toThrow(/manager/);
    expect(() => new Crew({ tasks: [first], checkpoint: { onEvents: ['task_complete' as never] } })).toThrow(
      /task_complete/,
    );
  });

  it('adds agents that tasks name', () => {
    const crew = new Crew({ tasks: [new Task({ description: 'x', expectedOutput: 'y', agent })] });
    expect(crew.agents).toEqual([agent]);
  });
});

describe('a sequential crew', () => {
  it('runs tasks in order, each with the previous output (or its context) and emits events with ids', async () => {
    const llm = offlineModel();
    const bus = new EventBus();
    const events = recordEvents(bus);
    const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'B', llm });
    const outline = new Task({
      name: 'outline',
      description: 'Outline a post about {topic}',
      expectedOutput: 'outline',
      agent: writer,
    });
    const draft = new Task({
      name: 'draft',
      description: 'Draft the post',
      expectedOutput: 'draft',
      agent: writer,
    });
    const title = new Task({
      name: 'title',
      description: 'Title it',
      expectedOutput: 'title',
      agent: writer,
      context: [outline],
    });
    const crew = new Crew({ tasks: [outline, draft, title] });
    const result = await crew.kickoff({ inputs: { topic: 'tides' }, bus });

    expect(result.tasksOutput.map((output) => output.name)).toEqual(['outline', 'draft', 'title']);
    expect(llm.calls[1]!.userText).toContain(result.tasksOutput[0]!.raw.slice(0, 60));
    expect(llm.calls[2]!.userText).toContain('## outline');
    expect(llm.calls[2]!.userText).not.toContain('## draft');
    expect(result.raw).toBe(result.tasksOutput[2]!.raw);
    expect(result.tokenUsage.totalTokens).toBeGreaterThan(0);
    const types = events.map((event) => event.type);
    expect(types[0]).toBe('crew_kickoff_started');
    expect(types.at(-1)).toBe('crew_kickoff_completed');
    const completed = events.filter((event) => event.type === 'task_completed');
    expect(completed.map((event) => event.context.taskIndex)).toEqual([0, 1, 2]);
    expect(completed[0]!.context).toMatchObject({
      crewId: crew.id,
      taskId: outline.id,
      agentId: writer.id,
      taskName: 'outline',
    });
  });

  it('gives structured output with an outputSchema', async () => {
    const analyst = new Agent({ role: 'Analyst', goal: 'Score', backstory: 'B', llm: offlineModel() });
    const crew = new Crew({
      tasks: [
        new Task({
          description: 'Score the idea',
          expectedOutput: 'a score',
          agent: analyst,
          outputSchema: z.object({ score: z.number(), reason: z.string() }),
        }),
      ],
    });
    const result = await crew.kickoff();
    expect(result.structured).toMatchObject({ score: expect.any(Number), reason: expect.any(String) });
    expect(result.tasksOutput[0]!.structured).toEqual(result.structured);
  });

  it('shows earlier results from short-term memory and crew knowledge in later prompts', async () => {
    const llm = offlineModel();
    const bus = new EventBus();
    const events = recordEvents(bus);
    const { crew } = threeTaskCrew(llm, {
      memory: true,
      knowledgeSources: [
        new StringKnowledgeSource({
          name: 'style-guide',
          content: 'A summary about AI uses short sentences.',
        }),
      ],
    });
    await crew.kickoff({ inputs: { topic: 'AI' }, bus });
    expect(llm.calls[0]!.userText).not.toContain('Earlier results');
    expect(llm.calls[2]!.userText).toContain('Earlier results you may use');
    expect(llm.calls[1]!.userText).toContain('style-guide');
    const types = new Set(events.map((event) => event.type));
    for (const type of ['memory_save_completed', 'memory_query_completed', 'knowledge_query_completed'])
      expect(types).toContain(type);
    expect(crew.memory!.size).toBe(3);
  });

  it('warms each agent’s prompt cache once before the first task when asked', async () => {
    const llm = offlineModel();
    const { crew } = threeTaskCrew(llm, { cachePreload: true, cachePreloadStrategy: 'sequential' });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const probes = llm.calls.filter((call) => call.settings.maxOutputTokens === 1);
    expect(probes).toHaveLength(3);
    expect(llm.calls.slice(0, 3).every((call) => call.settings.maxOutputTokens === 1)).toBe(true);
  });
});

describe('a hierarchical crew', () => {
  const managerScript: OfflineModelOptions['script'] = [
    {
      toolName: DELEGATION_TOOL_NAME,
      input: { coworker: 'Researcher', task: 'Find three facts about tides', context: 'for a short report' },
    },
  ];

  function hierarchicalCrew(
    managerModel: ReturnType<typeof offlineModel>,
    workerModel: ReturnType<typeof offlineModel>,
    location?: string,
  ) {
    const researcher = new Agent({
      role: 'Researcher',
      goal: 'Find facts',
      backstory: 'B',
      llm: workerModel,
      tools: [lookupTool],
    });
    const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'B', llm: workerModel });
    return new Crew({
      agents: [researcher, writer],
      tasks: [new Task({ description: 'Report on tides', expectedOutput: 'a report' })],
      process: 'hierarchical',
      managerLlm: managerModel,
      ...(location ? { checkpoint: { location, onEvents: ['*'] } } : {}),
    });
  }

  it('the manager delegates through the delegation tool and answers with the result', async () => {
    const manager = offlineModel({ script: managerScript });
    const worker = toolUsingModel();
    const result = await hierarchicalCrew(manager, worker).kickoff();
    expect(manager.calls).toHaveLength(2);
    expect(manager.calls[0]!.tools.map((tool) => tool.name)).toContain(DELEGATION_TOOL_NAME);
    expect(manager.calls[0]!.userText).toContain('- Researcher: Find facts');
    expect(worker.calls[0]!.userText).toContain('Find three facts about tides');
    expect(worker.calls[0]!.userText).toContain('for a short report');
    expect(result.tasksOutput[0]!.agentRole).toBe('Crew Manager');
    expect(result.raw).toContain(DELEGATION_TOOL_NAME);
  });

  it('an abort inside a delegation is continued on resume, not saved as a failed delegation', async () => {
    const location = join(directory.path, 'cp');
    const bus = new EventBus();
    const controller = new AbortController();
    // Ctrl+C while the coworker's first model call is in flight, in the middle of the delegation.
    bus.onAny((_source: unknown, event: BaseEvent) => {
      if (event.type === 'llm_call_started' && event.context?.agentRole === 'Researcher') controller.abort();
    });
    const interrupted = hierarchicalCrew(
      offlineModel({ script: managerScript }),
      toolUsingModel({ latencyMs: 5_000 }),
      location,
    );
    await expect(interrupted.kickoff({ bus, abortSignal: controller.signal })).rejects.toMatchObject({
      code: 'aborted',
    });
    const last = readCheckpoint(checkpointFiles(location).at(-1)!);
    expect(last.events.map((event) => event.type)).not.toContain('tool_usage_error');

    const manager = offlineModel({ script: managerScript });
    const worker = toolUsingModel();
    const resumed = await hierarchicalCrew(manager, worker).kickoff({
      fromCheckpoint: { restoreFrom: location },
    });
    // The delegation call was saved: the manager is not asked again until the coworker answered.
    expect(manager.calls).toHaveLength(1);
    expect(worker.calls).toHaveLength(2);
    const delegationResult = JSON.stringify(manager.calls[0]!.messages.at(-1));
    expect(delegationResult).not.toContain('error-text');
    expect(delegationResult).toContain('[offline model]');
    expect(resumed.raw).toContain(DELEGATION_TOOL_NAME);
  });

  it('a run interrupted inside a delegation continues the coworker’s saved conversation', async () => {
    const location = join(directory.path, 'cp');
    await hierarchicalCrew(offlineModel({ script: managerScript }), toolUsingModel(), location).kickoff();
    // The checkpoint written right after the coworker's own tool call, in the middle of the delegation.
    const inside = checkpointFiles(location).find((file) => {
      const document = readCheckpoint(file);
      return (
        document.metadata.trigger === 'tool_usage_finished' &&
        document.events.at(-1)!.context?.agentRole === 'Researcher'
      );
    })!;
    expect(inside).toBeDefined();

    const manager = offlineModel({ script: managerScript });
    const worker = toolUsingModel();
    // Resuming a checkpoint its finished run went past is warned about: expected here.
    const logs = captureLogs();
    await hierarchicalCrew(manager, worker).kickoff({ fromCheckpoint: { restoreFrom: inside } });
    logs.expect('is not the latest of its run');
    logs.stop();
    // The manager's delegation call and the coworker's tool call were saved: neither is made again.
    expect(manager.calls).toHaveLength(1);
    expect(worker.calls).toHaveLength(1);
    expect(worker.calls[0]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
  });
});
