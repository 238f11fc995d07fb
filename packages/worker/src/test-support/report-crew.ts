import { appendFileSync } from 'node:fs';
import { Agent, Crew, registerProject, Task } from '@crewline/runtime';
import { type OfflineModelCall, offlineModel } from '@crewline/runtime/testing';
import type { RunContext } from '../run-registry.js';

/** The tasks of the test crew, in order; a model call belongs to the task its prompt names. */
export const taskDescriptions = [
  'Research {topic}',
  'Outline a report on {topic}',
  'Write the report on {topic}',
  'Review the report on {topic}',
];

export function taskOf(call: OfflineModelCall, topic: string): number {
  const prompt = JSON.stringify(call.messages[0] ?? '');
  return taskDescriptions.findIndex((description) =>
    prompt.includes(`Current task: ${description.replace('{topic}', topic)}`),
  );
}

/** One model call as the shared call log records it (appended when the call starts: it is paid then). */
export interface LoggedCall {
  pid: number;
  runId: string;
  task: number;
  failed: boolean;
}

export interface ReportCrewOptions {
  /** File every call is appended to, synchronously, when it starts. Default: none. */
  callLog?: string;
  /** Simulated latency of each call. Default `0`. */
  latencyMs?: number;
  /** Makes a call fail: `(task, attempt)` → true. Default: never. */
  failWhen?: (task: number, attempt: number) => boolean;
  /** Told of each call as it starts. */
  onCall?: (runId: string, task: number) => void;
}

/**
 * A factory of the four-task report crew: one offline model per run, registered under an id of its
 * own (checkpoints store it; a resumed attempt finds the same model again in this process).
 */
export function reportCrewFactory(options: ReportCrewOptions = {}) {
  return (context: RunContext): Crew => {
    const topic = String(context.inputs.topic ?? '');
    if (topic === '') {
      throw Object.assign(new Error('inputs.topic is required'), { name: 'BadInput' });
    }
    const failed = (call: OfflineModelCall) =>
      options.failWhen?.(taskOf(call, topic), context.attempt) ?? false;
    const model = offlineModel({
      name: 'report',
      latencyMs: (call) => {
        const task = taskOf(call, topic);
        if (options.callLog !== undefined) {
          const entry: LoggedCall = { pid: process.pid, runId: context.runId, task, failed: failed(call) };
          appendFileSync(options.callLog, `${JSON.stringify(entry)}\n`);
        }
        options.onCall?.(context.runId, task);
        return options.latencyMs ?? 0;
      },
      failOn: (call) => (failed(call) ? 'made to fail by the test' : false),
    });
    registerProject({ models: { [`report:${context.runId}`]: model } });
    const researcher = new Agent({
      role: 'Researcher',
      goal: 'Research {topic}',
      backstory: 'Careful',
      llm: model,
    });
    const writer = new Agent({ role: 'Writer', goal: 'Write about {topic}', backstory: 'Clear', llm: model });
    const agents = [researcher, writer, writer, researcher];
    return new Crew({
      name: 'report-crew',
      agents: [researcher, writer],
      tasks: taskDescriptions.map(
        (description, index) =>
          new Task({
            description,
            expectedOutput: `Part ${index + 1}, in a few lines`,
            agent: agents[index]!,
          }),
      ),
    });
  };
}

/** The output of an uninterrupted run of the report crew on `topic`, without any checkpoint. */
export async function uninterruptedOutput(topic: string): Promise<string> {
  const crew = reportCrewFactory()({
    runId: `reference-${topic.replaceAll(/\W/g, '-')}`,
    inputs: { topic },
    attempt: 1,
  });
  return (await crew.kickoff({ inputs: { topic } })).raw;
}
