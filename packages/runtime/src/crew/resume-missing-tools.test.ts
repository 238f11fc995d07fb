import { join } from 'node:path';
import { CrewlineError } from '@crewline/events';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent/agent.js';
import { lookupTool, offlineModel, toolUsingModel } from '../e2e/support/fixtures.js';
import { useTemporaryDirectory } from '../e2e/support/use-temporary-directory.js';
import { ProjectRegistry } from '../project-config/project-config.js';
import { continueFromCheckpoint } from '../restore/continue-from-checkpoint.js';
import { Task } from '../task/task.js';
import { Crew } from './crew.js';

const directory = useTemporaryDirectory();

/**
 * A Writer with no tools outlines, a Researcher with a custom tool researches, the Writer writes; the
 * run dies in the task named `dieIn` (checkpointed after every completed task).
 */
async function interruptedRun(location: string, dieIn: 'Research' | 'Write'): Promise<void> {
  const model = toolUsingModel({
    failOn: (call) => JSON.stringify(call.messages[0]).includes(`Current task: ${dieIn}`),
  });
  const researcher = new Agent({
    role: 'Researcher',
    goal: 'Research {topic}',
    backstory: 'Expert',
    llm: model,
    tools: [lookupTool],
  });
  const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'Expert', llm: model });
  const crew = new Crew({
    name: 'tools-crew',
    agents: [researcher, writer],
    tasks: [
      new Task({ description: 'Outline {topic}', expectedOutput: 'headings', agent: writer }),
      new Task({ description: 'Research {topic}', expectedOutput: 'bullets', agent: researcher }),
      new Task({ description: 'Write a summary', expectedOutput: 'paragraph', agent: writer }),
    ],
    checkpoint: { location },
  });
  await crew.kickoff({ inputs: { topic: 'AI' } }).catch(() => undefined);
}

// The custom tool is not registered here: only the model the checkpoint names.
const withoutTools = () => new ProjectRegistry().register({ models: { 'offline:default': offlineModel() } });

describe('resuming a crew whose custom tool is not registered', () => {
  it('continues when only finished tasks used the tool, and later checkpoints still name it', async () => {
    const location = join(directory.path, 'cp');
    await interruptedRun(location, 'Write');
    const result = await continueFromCheckpoint({
      reference: location,
      mode: 'resume',
      registry: withoutTools(),
    });
    expect(result.kind).toBe('crew');
    expect(result.output.length).toBeGreaterThan(0);
    // Resumed again (from its own last checkpoint) with the tool registered, nothing was lost.
    const restored = await Crew.fromCheckpoint({ restoreFrom: result.lastCheckpoint as string });
    expect(restored.agents[0]?.tools.map((tool) => tool.name)).toEqual(['lookup']);
  });

  it('refuses when a remaining task needs it, naming the task, its agent and the tool', async () => {
    const location = join(directory.path, 'cp');
    await interruptedRun(location, 'Research');
    const error = await continueFromCheckpoint({
      reference: location,
      mode: 'resume',
      registry: withoutTools(),
    }).catch((caught: unknown) => caught);
    const message = (error as Error).message;
    expect(CrewlineError.hasCode(error, 'not_rebuildable'), message).toBe(true);
    expect(message).toContain('tool(s) lookup');
    expect(message).toContain('task 2 "Research {topic}" (agent Researcher) needs lookup');
    expect(message).toContain("defineConfig({ tools: { 'lookup': yourTool } })");
  });
});
