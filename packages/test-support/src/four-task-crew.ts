import { Agent, Crew, type CrewOptions, Task } from '@crewline/runtime';
import type { OfflineModel, OfflineModelCall } from '@crewline/runtime/testing';

/** The tasks of the crew, in order; a model call belongs to the task its prompt names. */
export const taskDescriptions = [
  'Research {topic}',
  'Outline a report on {topic}',
  'Write the report on {topic}',
  'Review the report on {topic}',
];

/** The 0-based task a model call of a run on `topic` works on (its prompt names the current task), or -1. */
export function taskOf(call: OfflineModelCall, topic: string): number {
  const prompt = JSON.stringify(call.messages[0] ?? '');
  return taskDescriptions.findIndex((description) =>
    prompt.includes(`Current task: ${description.replace('{topic}', topic)}`),
  );
}

/**
 * One model call as a shared call log records it (appended when the call starts: it is paid then):
 * which process, which run (when one process runs several), which task, whether it was made to fail.
 */
export interface LoggedCall {
  pid: number;
  runId?: string;
  task: number;
  failed: boolean;
}

export interface FourTaskCrewOptions {
  name: string;
  model: OfflineModel;
  checkpoint?: CrewOptions['checkpoint'];
}

/** Two agents, four tasks; the same definition in every process (a resumed crew is built in code). */
export function fourTaskCrew(options: FourTaskCrewOptions): Crew {
  const researcher = new Agent({
    role: 'Researcher',
    goal: 'Research {topic}',
    backstory: 'Careful',
    llm: options.model,
  });
  const writer = new Agent({
    role: 'Writer',
    goal: 'Write about {topic}',
    backstory: 'Clear',
    llm: options.model,
  });
  const agents = [researcher, writer, writer, researcher];
  return new Crew({
    name: options.name,
    agents: [researcher, writer],
    tasks: taskDescriptions.map(
      (description, index) =>
        new Task({ description, expectedOutput: `Part ${index + 1}, in a few lines`, agent: agents[index]! }),
    ),
    ...(options.checkpoint !== undefined ? { checkpoint: options.checkpoint } : {}),
  });
}
