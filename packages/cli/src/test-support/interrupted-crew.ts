import { join } from 'node:path';
import { Agent, Crew, Task } from '@crewline/runtime';
import type { StoredCheckpoint } from '@crewline/runtime-state';
import { providerOf } from './fixtures.js';

export interface InterruptedCrewRun {
  /** The JSON location, `<directory>/.checkpoints`. */
  location: string;
  /** Task 1 (`outline`) completed, task 2 (`write`) stopped after its model call, as a crash there leaves it. */
  midTask: StoredCheckpoint;
}

/**
 * Runs a two-task crew on `{topic}` = `tides` in `directory` with JSON checkpoints on
 * `llm_call_completed` (written after each model answer and before its task completes), and returns
 * the last one: the run interrupted in its last task with a saved conversation of one model call.
 */
export async function writeInterruptedCrewRun(directory: string, llm: string): Promise<InterruptedCrewRun> {
  const location = join(directory, '.checkpoints');
  const provider = await providerOf('json');
  const writer = new Agent({ role: 'Writer', goal: 'Write about {topic}', backstory: 'Plain', llm });
  const crew = new Crew({
    name: 'Interrupted crew',
    agents: [writer],
    tasks: [
      new Task({ name: 'outline', description: 'Outline {topic}', expectedOutput: 'Lines', agent: writer }),
      new Task({ name: 'write', description: 'Write on {topic}', expectedOutput: 'Lines', agent: writer }),
    ],
    checkpoint: { location, provider, onEvents: ['llm_call_completed'] },
  });
  await crew.kickoff({ inputs: { topic: 'tides' } });
  const written = await provider.list(provider.resolveLocation(location));
  await provider.close?.();
  const midTask = [...written].sort((a, b) => a.eventCount - b.eventCount).at(-1)!;
  return { location, midTask };
}
