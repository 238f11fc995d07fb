// What the package README examples take as given: agents and tasks, here on the offline model (no
// network, no key), so that apps/docs-check can run those examples.
import { Agent, Crew, Task } from '@crewline/runtime';
import { offlineModel } from '@crewline/runtime/testing';

export const llm = offlineModel();
const agent = new Agent({ role: 'Analyst', goal: 'Answer', backstory: 'Expert', llm });
export const agents = [agent];
export const tasks = [new Task({ description: 'Summarise {topic}', expectedOutput: 'one line', agent })];

/**
 * Runs a researcher and a writer once with `checkpoint: true`, so that ./.checkpoints holds the
 * checkpoints the README examples fork and continue from.
 */
export async function writeTwoTaskCheckpoints(): Promise<void> {
  const researcher = new Agent({ role: 'Researcher', goal: 'Research {topic}', backstory: 'Expert', llm });
  const writer = new Agent({ role: 'Writer', goal: 'Write in a {tone} tone', backstory: 'Expert', llm });
  const crew = new Crew({
    agents: [researcher, writer],
    tasks: [
      new Task({ description: 'Research {topic}', expectedOutput: 'bullets', agent: researcher }),
      new Task({ description: 'Write a summary', expectedOutput: 'paragraph', agent: writer }),
    ],
    checkpoint: true,
  });
  await crew.kickoff({ inputs: { topic: 'AI', tone: 'warm' } });
}
