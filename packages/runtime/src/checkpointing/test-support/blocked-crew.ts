import type { CheckpointConfigInput } from '@crewline/runtime-state';
import { Agent } from '../../agent/agent.js';
import { Crew } from '../../crew/crew.js';
import { offlineModel } from '../../models/offline/offline-model.js';
import { Task } from '../../task/task.js';

/** The crew of blocked-after-completion-child.ts, built the same in the child and in the test. */
export function blockedCrew(checkpoint?: CheckpointConfigInput) {
  const llm = offlineModel({ name: 'blocked' });
  const researcher = new Agent({ role: 'Researcher', goal: 'Research', backstory: 'B', llm });
  const writer = new Agent({ role: 'Writer', goal: 'Write', backstory: 'B', llm });
  const crew = new Crew({
    name: 'blocked',
    agents: [researcher, writer],
    tasks: [
      new Task({ description: 'research tides', expectedOutput: 'notes', agent: researcher }),
      new Task({ description: 'write about tides', expectedOutput: 'a text', agent: writer }),
    ],
    ...(checkpoint ? { checkpoint: { onEvents: ['*'], ...checkpoint } } : {}),
  });
  return { crew, llm };
}
