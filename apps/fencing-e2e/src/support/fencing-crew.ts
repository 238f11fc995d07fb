import { appendFileSync } from 'node:fs';
import { Agent, Crew, type CrewOptions, Task } from '@crewline/runtime';
import { type OfflineModel, type OfflineModelCall, offlineModel } from '@crewline/runtime/testing';

/** The id the crew's model is registered under: checkpoints store it, every process registers it. */
export const MODEL_ID = 'fencing:offline';

export const inputs = { topic: 'tide tables' };

/** The task descriptions, in order; a model call belongs to the task its prompt names. */
export const taskDescriptions = [
  'Research {topic}',
  'Outline an article on {topic}',
  'Write the article on {topic}',
  'Review the article on {topic}',
];

/** The 0-based task a model call works on (its prompt names the current task), or -1. */
export function taskOf(call: OfflineModelCall): number {
  const prompt = JSON.stringify(call.messages[0] ?? '');
  return taskDescriptions.findIndex((description) =>
    prompt.includes(`Current task: ${description.replace('{topic}', inputs.topic)}`),
  );
}

/** One model call as the call log records it: which process, which task, whether it was made to fail. */
export interface LoggedCall {
  pid: number;
  task: number;
  failed: boolean;
}

export interface FencingModelOptions {
  /** File every call is appended to, synchronously, when it starts (it is paid once it starts). */
  callLog: string;
  /** Simulated latency of a call on `task`. Default 0. */
  latencyMs?: (task: number) => number;
  /** Calls on this task fail (the run stops there). */
  failTask?: number;
  /** Told of each call as it starts (before its latency). */
  onCall?: (task: number) => void;
}

/**
 * The offline model every process of the trials uses: each call is logged before it is answered, in
 * one file shared by all processes, so a test can count what was paid for, per task, across processes
 * (a process killed mid-call has logged it already).
 */
export function fencingModel(options: FencingModelOptions): OfflineModel {
  const failed = (call: OfflineModelCall) =>
    options.failTask !== undefined && taskOf(call) === options.failTask;
  return offlineModel({
    name: 'fencing',
    latencyMs: (call) => {
      const task = taskOf(call);
      const entry: LoggedCall = { pid: process.pid, task, failed: failed(call) };
      appendFileSync(options.callLog, `${JSON.stringify(entry)}\n`);
      options.onCall?.(task);
      return options.latencyMs?.(task) ?? 0;
    },
    failOn: (call) => (failed(call) ? 'made to fail by the fencing trial' : false),
  });
}

/** Two agents, four tasks; the same definition in every process (a resumed crew is built in code). */
export function fencingCrew(model: OfflineModel, checkpoint?: CrewOptions['checkpoint']): Crew {
  const researcher = new Agent({
    role: 'Researcher',
    goal: 'Research {topic}',
    backstory: 'Careful',
    llm: model,
  });
  const writer = new Agent({ role: 'Writer', goal: 'Write about {topic}', backstory: 'Clear', llm: model });
  const agents = [researcher, writer, writer, researcher];
  return new Crew({
    name: 'fencing-crew',
    agents: [researcher, writer],
    tasks: taskDescriptions.map(
      (description, index) =>
        new Task({ description, expectedOutput: `Part ${index + 1}, in a few lines`, agent: agents[index]! }),
    ),
    ...(checkpoint !== undefined ? { checkpoint } : {}),
  });
}
