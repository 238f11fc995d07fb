import { EventBus } from '@crewline/events';
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
import type { OfflineModel, OfflineModelCall } from '../models/offline/offline-model.js';
import { registerProject } from '../project-config/project-config.js';
import { Task } from '../task/task.js';
import { findCalls } from '../testing/call-helpers.js';
import { Crew } from './crew.js';

const directory = useTemporaryDirectory();

/** Assistant turns already in a call's prompt: how far into its conversation the call is. */
function assistantTurns(call: OfflineModelCall): number {
  return call.messages.filter((message) => message.role === 'assistant').length;
}

function callsFor(model: OfflineModel, description: string): OfflineModelCall[] {
  return findCalls(model, (call) =>
    JSON.stringify(call.messages[0]).includes(`Current task: ${description}`),
  );
}

/**
 * Runs the three-task crew on topic "AI", checkpointing on every event at `location`, until the
 * write task's second model call fails: the crash comes after its tool call was saved. Returns the
 * last checkpoint file.
 */
async function interruptWriteTask(location: string): Promise<string> {
  const failing = toolUsingModel({
    failOn: (call) =>
      JSON.stringify(call.messages[0]).includes('Current task: Write') && assistantTurns(call) === 1,
  });
  const { crew } = threeTaskCrew(failing, { checkpoint: { location, onEvents: ['*'] } });
  await expect(crew.kickoff({ inputs: { topic: 'AI' } })).rejects.toThrow();
  return checkpointFiles(location).at(-1)!;
}

describe('resuming a crew', () => {
  it('skips completed tasks, continues the interrupted one from its saved conversation, and never emits crew_kickoff_started again', async () => {
    const location = `${directory.path}/cp`;
    const latest = await interruptWriteTask(location);
    const saved = readCheckpoint(latest).entities[0]!.data.tasks as {
      status: string;
      conversation: { messages: unknown[] } | null;
    }[];
    expect(saved.map((task) => task.status)).toEqual(['completed', 'failed', 'pending']);
    expect(saved[1]!.conversation!.messages).toHaveLength(3); // prompt, tool call, tool result

    const model = toolUsingModel();
    const bus = new EventBus();
    const events = recordEvents(bus);
    const { crew: again } = threeTaskCrew(model);
    const result = await again.kickoff({ fromCheckpoint: { restoreFrom: location }, bus });

    expect(callsFor(model, 'Research')).toHaveLength(0);
    const writeCalls = callsFor(model, 'Write');
    expect(writeCalls).toHaveLength(1);
    expect(assistantTurns(writeCalls[0]!)).toBe(1); // continues after the saved tool call
    expect(callsFor(model, 'Review')).toHaveLength(2);
    expect(events.filter((event) => event.type === 'crew_kickoff_started')).toHaveLength(0);
    expect(
      events.filter((event) => event.type === 'task_started').map((event) => event.context.taskName),
    ).toEqual(['review']);
    expect(events.filter((event) => event.type === 'tool_usage_started')).toHaveLength(1); // review's only
    expect(result.tasksOutput.map((output) => output.raw.length > 0)).toEqual([true, true, true]);

    // Same final output as a run that was never interrupted.
    const { crew: uninterrupted } = threeTaskCrew(toolUsingModel());
    expect((await uninterrupted.kickoff({ inputs: { topic: 'AI' } })).raw).toBe(result.raw);
  });

  it('re-templates pending tasks only with new inputs', async () => {
    const location = `${directory.path}/cp`;
    const failing = toolUsingModel({
      failOn: (call) => JSON.stringify(call.messages[0]).includes('Current task: Write'),
    });
    const { crew } = threeTaskCrew(failing, { checkpoint: { location } });
    await expect(crew.kickoff({ inputs: { topic: 'AI' } })).rejects.toThrow();

    registerProject({ tools: { lookup: lookupTool } });
    const model = toolUsingModel();
    const restored = await Crew.fromCheckpoint({ restoreFrom: location });
    // The rebuilt crew's agents use 'offline:default'; point them at our recording model instead.
    registerProject({ models: { 'offline:default': model } });
    const result = await restored.kickoff({ inputs: { topic: 'robots' } });

    expect(result.tasksOutput[0]!.description).toBe('Research AI trends');
    expect(result.tasksOutput[0]!.raw).toContain('AI');
    expect(result.tasksOutput[1]!.description).toBe('Write a summary about robots');
    expect(callsFor(model, 'Write a summary about robots')).toHaveLength(2);
    expect(callsFor(model, 'Research')).toHaveLength(0);
    // The writer's system prompt is re-templated too (goal "Write about {topic}").
    expect(callsFor(model, 'Write a summary about robots')[0]!.system).toContain('Write about robots');
  });

  it('starts the interrupted task over when the inputs change: its saved prompts hold the old ones', async () => {
    // Its conversation was prompted with "AI".
    const interrupted = await interruptWriteTask(`${directory.path}/cp`);

    const model = toolUsingModel();
    const { crew: again } = threeTaskCrew(model);
    await again.kickoff({ fromCheckpoint: { restoreFrom: interrupted }, inputs: { topic: 'robots' } });
    // The write task ran from its start on the new topic (a prompt, then its tool call answered).
    expect(callsFor(model, 'Write a summary about AI')).toHaveLength(0);
    const writeCalls = callsFor(model, 'Write a summary about robots');
    expect(writeCalls.map(assistantTurns)).toEqual([0, 1]);
    expect(callsFor(model, 'Research')).toHaveLength(0);

    // With the same inputs it continues its saved conversation: nothing paid twice.
    const same = toolUsingModel();
    const { crew: resumed } = threeTaskCrew(same);
    await resumed.kickoff({ fromCheckpoint: { restoreFrom: interrupted }, inputs: { topic: 'AI' } });
    expect(callsFor(same, 'Write').map(assistantTurns)).toEqual([1]);
  });

  it('a completed checkpoint resumes without any model call and gives the same output', async () => {
    const location = `${directory.path}/cp`;
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location } });
    const first = await crew.kickoff({ inputs: { topic: 'AI' } });
    const model = toolUsingModel();
    const { crew: again } = threeTaskCrew(model);
    const second = await again.kickoff({
      fromCheckpoint: { restoreFrom: checkpointFiles(location).at(-1)! },
    });
    expect(model.calls).toHaveLength(0);
    expect(second.raw).toBe(first.raw);
    expect(second.tokenUsage).toEqual(first.tokenUsage);
  });

  it('keeps writing on the restored branch, naming the restored checkpoint as parent', async () => {
    const location = `${directory.path}/cp`;
    const failing = toolUsingModel({
      failOn: (call) => JSON.stringify(call.messages[0]).includes('Current task: Review'),
    });
    const { crew } = threeTaskCrew(failing, { checkpoint: { location } });
    await expect(crew.kickoff({ inputs: { topic: 'AI' } })).rejects.toThrow();
    const before = checkpointFiles(location);
    const { crew: again } = threeTaskCrew(toolUsingModel());
    await again.kickoff({ fromCheckpoint: { restoreFrom: before.at(-1)! } });
    const after = checkpointFiles(location);
    expect(after).toHaveLength(before.length + 1);
    const last = readCheckpoint(after.at(-1)!);
    const restored = readCheckpoint(before.at(-1)!);
    expect(last.metadata.parentId).toBe(restored.metadata.id);
    expect(last.metadata.lineageId).toBe(restored.metadata.lineageId);
    expect(last.metadata.branch).toBe('main');
  });

  it('rebuilds a declarative crew (model ids, no custom tools) from the checkpoint alone', async () => {
    const location = `${directory.path}/cp`;
    const researcher = new Agent({
      role: 'Researcher',
      goal: 'Research {topic}',
      backstory: 'Expert',
      llm: 'offline:declarative',
    });
    const writer = new Agent({
      role: 'Writer',
      goal: 'Write',
      backstory: 'Expert',
      llm: 'offline:declarative',
      checkpoint: false,
    });
    const crew = new Crew({
      name: 'declarative',
      agents: [researcher, writer],
      tasks: [
        new Task({
          name: 'research',
          description: 'Research {topic}',
          expectedOutput: 'bullets',
          agent: researcher,
          outputSchema: z.object({ points: z.array(z.string()) }),
        }),
        new Task({ description: 'Write it up', expectedOutput: 'paragraph', agent: writer }),
      ],
      memory: true,
      checkpoint: { location, onEvents: ['task_completed'], maxCheckpoints: 3 },
    });
    const first = await crew.kickoff({ inputs: { topic: 'AI' } });
    const rebuilt = await Crew.fromCheckpoint({ restoreFrom: checkpointFiles(location)[0]! });
    expect(rebuilt.name).toBe('declarative');
    expect(rebuilt.agents.map((agent) => [agent.role, agent.modelId, agent.checkpoint])).toEqual([
      ['Researcher', 'offline:declarative', undefined],
      ['Writer', 'offline:declarative', false],
    ]);
    expect(rebuilt.tasks[0]!.outputSchema).toBeDefined();
    expect(rebuilt.memory!.size).toBe(1);
    expect(rebuilt.checkpoint).toMatchObject({ onEvents: ['task_completed'], maxCheckpoints: 3 });
    const second = await rebuilt.kickoff();
    expect(second.raw).toBe(first.raw);
    expect(second.tasksOutput[0]!.structured).toEqual(first.tasksOutput[0]!.structured);
  });

  it('refuses to apply a checkpoint to a crew of another shape', async () => {
    const location = `${directory.path}/cp`;
    const { crew } = threeTaskCrew(toolUsingModel(), { checkpoint: { location } });
    await crew.kickoff({ inputs: { topic: 'AI' } });
    const other = new Crew({ name: 'research-crew', tasks: [crew.tasks[0]!] });
    await expect(other.kickoff({ fromCheckpoint: { restoreFrom: location } })).rejects.toMatchObject({
      code: 'invalid_state',
    });
  });
});
